package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// distinctFacts counts the facts a set of directed-route walks needs
// (docs/architecture.md, "Facts shared by a run"): per DR path reached,
// one NodeInfo and (after the source) a CA's PortInfo; per switch one
// PortInfo (port 0); per node one NodeDescription; per switch that forwards, one SwitchInfo and one LFT
// block per block of the DLIDs it forwards. The DR path of hop i is that
// of hop i-1 extended by hop i-1's egress port.
func distinctFacts(rs []trace.JSONResult) int {
	facts := map[string]bool{}
	for _, r := range rs {
		path := ""
		for i, h := range r.Hops {
			if i > 0 {
				path += fmt.Sprintf(",%d", r.Hops[i-1].OutPort)
				if h.NodeType == "switch" {
					facts["pi "+h.NodeGUID] = true // port 0, whatever route reaches it
				} else {
					facts["pi "+path] = true
				}
			}
			facts["ni "+path] = true
			facts["nd "+h.NodeGUID] = true
			if h.NodeType == "switch" && h.OutPort != 0 {
				facts["si "+h.NodeGUID] = true
				facts[fmt.Sprintf("lft %s %d", h.NodeGUID, ibmad.LFTBlockOf(r.DLID))] = true
			}
		}
	}
	return len(facts)
}

// TestAllAsksEachFactOnceOnIbsim: on fattree-128 in ibsim with OpenSM,
// `ibtracer --all --no-validate` from H0-0 sends at most 1.2 MADs per
// distinct fact its walks need (distinctFacts): a node's NodeInfo and
// PortInfo and a switch's LFT block are asked once per run, whichever
// destination needs them first, concurrent walks included. The MADs are
// those the JSON results count (retries included), and, from the totals
// line, those of the whole run, the listing of the CA ports included.
func TestAllAsksEachFactOnceOnIbsim(t *testing.T) {
	ibsimtest.Require(t)
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "fattree-128.net"), ibsimtest.Options{KeepSM: true, SMHost: true})
	rs, mads, errOut := allJSONStderr(t, fab, "H0-0", "--no-validate") // every result ok
	facts := distinctFacts(rs)
	if len(rs) < 128 || facts == 0 {
		t.Fatalf("%d results, %d facts", len(rs), facts)
	}
	t.Logf("%d traces: %d MADs for %d distinct facts (%.2f per fact); %s", len(rs), mads, facts,
		float64(mads)/float64(facts), strings.TrimSpace(errOut))
	if float64(mads) > 1.2*float64(facts) {
		t.Fatalf("%d MADs for %d distinct facts: %.2f per fact, want at most 1.2", mads, facts, float64(mads)/float64(facts))
	}
	// The totals line counts the traces' MADs as the JSON does, and every
	// MAD of the run besides. The whole run, the listing of the CA ports
	// included, sends at most 1.2 MADs per distinct fact of the traces
	// alone. OpenSM's NodeRecord table comes cut short under ibsim, so
	// the ports are listed from the walks to the LIDs H0-0's leaf switch
	// forwards (cmd/ibtracer/allrouted.go): after its GetTable the run
	// sends fewer MADs besides the traces' than there are LIDs up to the
	// leaf's LinearFDBTop (read here with smpquery, infiniband-diags),
	// where asking the SA LID by LID took one each (785 MADs in all,
	// 629 by the traces).
	m := totalsMADs.FindStringSubmatch(errOut)
	split := totalsSplit.FindStringSubmatch(errOut)
	if m == nil || split == nil || !strings.Contains(errOut, "facts shared rather than asked") {
		t.Fatalf("the totals line does not say the run's MADs, the traces' and the facts shared: %s", errOut)
	}
	sent, _ := strconv.Atoi(m[1])
	traces, _ := strconv.Atoi(split[1])
	top := leafTop(t, fab, "H0-0")
	t.Logf("totals: %d MADs sent, %d by the traces (%.2f per distinct fact of the traces); the leaf's LinearFDBTop %d",
		sent, traces, float64(sent)/float64(facts), top)
	if traces != mads || sent < mads+1 {
		t.Fatalf("the totals say %d MADs sent, %d by the traces; the JSON's traces sent %d: want %d by the traces and at least %d sent (their GetTable)",
			sent, traces, mads, mads, mads+1)
	}
	if float64(sent) > 1.2*float64(facts) || sent-mads >= top {
		t.Fatalf("the run sent %d MADs, %d besides the traces', for %d distinct facts (%.2f per fact): want at most 1.2 per fact, and fewer than the %d LIDs up to the leaf's LinearFDBTop besides the traces'",
			sent, sent-mads, facts, float64(sent)/float64(facts), top)
	}
}

// leafTop is the LinearFDBTop of the switch port 1 of node is cabled
// to, as stock smpquery (infiniband-diags) reads it.
func leafTop(t *testing.T, fab *ibsimtest.Fabric, node string) int {
	t.Helper()
	si, err := fab.Tool(node, "smpquery", "-D", "switchinfo", "0,1")
	if err != nil {
		t.Fatal(err)
	}
	tm := linearFDBTop.FindStringSubmatch(si)
	if tm == nil {
		t.Fatalf("no LinearFDBTop in smpquery's SwitchInfo:\n%s", si)
	}
	top, _ := strconv.Atoi(tm[1])
	return top
}

// linearFDBTop reads smpquery's SwitchInfo line "LinearFdbTop:....N".
var linearFDBTop = regexp.MustCompile(`(?m)^LinearFdbTop:\.*(\d+)$`)
