package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
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
// those the JSON results count (retries included); the totals line says
// how many facts were shared rather than asked.
func TestAllAsksEachFactOnceOnIbsim(t *testing.T) {
	ibsimtest.Require(t)
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "fattree-128.net"), ibsimtest.Options{KeepSM: true, SMHost: true})
	out, errOut, code := runCLI(t, fab, "H0-0", "--all", "--no-validate", "--format=json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rs []trace.JSONResult
	if err := json.Unmarshal([]byte(out), &rs); err != nil {
		t.Fatal(err)
	}
	mads := 0
	for _, r := range rs {
		if r.Status != "ok" {
			t.Fatalf("%s: %s %s", r.Destination, r.Status, r.Error)
		}
		mads += r.MADs
	}
	facts := distinctFacts(rs)
	if len(rs) < 128 || facts == 0 {
		t.Fatalf("%d results, %d facts", len(rs), facts)
	}
	t.Logf("%d traces: %d MADs for %d distinct facts (%.2f per fact); %s", len(rs), mads, facts,
		float64(mads)/float64(facts), strings.TrimSpace(errOut))
	if float64(mads) > 1.2*float64(facts) {
		t.Fatalf("%d MADs for %d distinct facts: %.2f per fact, want at most 1.2", mads, facts, float64(mads)/float64(facts))
	}
	if !strings.Contains(errOut, fmt.Sprintf("MADs: %d sent", mads)) || !strings.Contains(errOut, "facts shared") {
		t.Fatalf("the totals line does not say the run's %d MADs and the facts shared: %s", mads, errOut)
	}
}
