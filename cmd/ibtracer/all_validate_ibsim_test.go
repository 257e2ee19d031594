package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// allJSON runs `ibtracer --all --format=json` with args from node and
// returns the results and the MADs they count (retries included).
func allJSON(t *testing.T, fab *ibsimtest.Fabric, node string, args ...string) ([]trace.JSONResult, int) {
	t.Helper()
	rs, mads, _ := allJSONStderr(t, fab, node, args...)
	return rs, mads
}

// allJSONStderr is allJSON that also returns what the run wrote on
// stderr (the totals line).
func allJSONStderr(t *testing.T, fab *ibsimtest.Fabric, node string, args ...string) ([]trace.JSONResult, int, string) {
	t.Helper()
	out, errOut, code := runCLI(t, fab, node, append([]string{"--all", "--format=json"}, args...)...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errOut)
	}
	var rs []trace.JSONResult
	if err := json.Unmarshal([]byte(out), &rs); err != nil {
		t.Fatal(err)
	}
	mads := 0
	for _, r := range rs {
		if r.Status != "ok" {
			t.Fatalf("%v: %s: %s %s", args, r.Destination, r.Status, r.Error)
		}
		mads += r.MADs
	}
	return rs, mads, errOut
}

// TestAllValidatingAsksEachValidationOnceOnIbsim: on fattree-128 in
// ibsim with OpenSM on the tracing host (no vendor MAD goes to the SM's
// node: there is no agent and sma mode sends none), `ibtracer --all
// --validate=sma` asks each hop's SMA once per LID asked in the run: a
// switch on many paths is asked about its own LID once, whichever
// destination needs it first; each destination's own DLID is asked once
// (the traced route itself is never shared). The validating run's MADs
// above the --no-validate run's are then at most 1.2 times the distinct
// validation questions (node, LID asked) plus the facts of the routes
// to the switches' LIDs (at most one LFT block and one NodeInfo per link
// of each, counted generously as 2 per hop up to the switch).
func TestAllValidatingAsksEachValidationOnceOnIbsim(t *testing.T) {
	ibsimtest.Require(t)
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "fattree-128.net"), ibsimtest.Options{KeepSM: true, SMHost: true})
	_, plain := allJSON(t, fab, "H0-0", "--no-validate")
	rs, validating := allJSON(t, fab, "H0-0", "--validate=sma")
	questions, routeFacts := map[string]bool{}, 0
	for _, r := range rs {
		for i, h := range r.Hops {
			if i == 0 {
				continue
			}
			if h.ValidatedBy != "sma" || (h.Verdict != "validated" && h.Verdict != "ingress_unknown") {
				t.Fatalf("%s hop %d: %s by %q", r.Destination, i, h.Verdict, h.ValidatedBy)
			}
			k := fmt.Sprintf("%s %d", h.NodeGUID, h.LID)
			if i == len(r.Hops)-1 {
				k = fmt.Sprintf("%s dlid %d", h.NodeGUID, r.DLID)
			} else if !questions[k] {
				routeFacts += 2 * i
			}
			questions[k] = true
		}
	}
	extra := validating - plain
	t.Logf("%d destinations: --no-validate %d MADs, --validate=sma %d MADs: %d more for %d distinct validation questions and at most %d route facts",
		len(rs), plain, validating, extra, len(questions), routeFacts)
	if float64(extra) > 1.2*float64(len(questions)+routeFacts) {
		t.Fatalf("validating cost %d MADs more than the walks alone, for %d distinct questions and %d route facts: want at most 1.2 times their sum (%.0f)",
			extra, len(questions), routeFacts, 1.2*float64(len(questions)+routeFacts))
	}
}
