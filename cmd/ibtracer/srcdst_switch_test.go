package main

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/trace"
)

// TestSrcDstFromASwitch: `ibtracer SRC DST` run on a switch (the exporter
// on a switch's port 0) traces every pair, its own switch on the path or
// not, with every validation mode. The local switch's own hop is not
// asked: a MAD to its own LID crosses no link (issue 40, defect 3: it
// panicked in the SMA's validation with an empty route).
func TestSrcDstFromASwitch(t *testing.T) {
	lids := simLIDs(t, "fattree-mini.net")
	for _, local := range []string{"L0", "S0"} {
		for _, mode := range []string{"auto", "agent", "sma"} {
			for src, slid := range lids {
				for dst, dlid := range lids {
					if src == dst {
						continue
					}
					out, errOut, code := simCLI(t, "fattree-mini.net", local, "--validate="+mode, "--format=json", fmt.Sprint(slid), fmt.Sprint(dlid))
					var rs []trace.JSONResult
					if err := json.Unmarshal([]byte(out), &rs); err != nil || len(rs) != 1 {
						t.Fatalf("on %s, %s: %s -> %s: exit %d, %v\n%s%s", local, mode, src, dst, code, err, out, errOut)
					}
					r := rs[0]
					if code != 0 || r.Status != string(trace.StatusOK) {
						t.Fatalf("on %s, %s: %s -> %s: exit %d, status %s: %s", local, mode, src, dst, code, r.Status, errOut)
					}
					for _, h := range r.Hops[1:] {
						if h.NodeDesc == local && h.AgentStatus != string(trace.AgentNotAsked) {
							t.Fatalf("on %s, %s: %s -> %s: the local switch's hop is %s, want not_asked", local, mode, src, dst, h.AgentStatus)
						}
					}
				}
			}
		}
	}
}
