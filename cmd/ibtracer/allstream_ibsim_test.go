package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// TestAllStreamedKeepsOrderAndPathsOnIbsim: with OpenSM's SA answering
// LID by LID (under ibsim), `--all` traces each CA port as soon as the
// SA names it (allstream.go), yet prints as before: the command line's
// destinations first, then every CA port but the local one in LID
// order; and each result is its own destination's: the same DLIDs,
// statuses and hops, node for node and port for port, as the same LIDs
// traced with -l, one after another.
func TestAllStreamedKeepsOrderAndPathsOnIbsim(t *testing.T) {
	ibsimtest.Require(t)
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "fattree-4x2x4.net"), ibsimtest.Options{KeepSM: true, SMHost: true})
	jsonOf := func(args ...string) []trace.JSONResult {
		t.Helper()
		out, errOut, code := runCLI(t, fab, "H0-0", append([]string{"--no-validate", "--format=json"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		var rs []trace.JSONResult
		if err := json.Unmarshal([]byte(out), &rs); err != nil {
			t.Fatal(err)
		}
		return rs
	}
	plain := jsonOf("--all")
	if len(plain) < 2 {
		t.Fatalf("--all traced %d ports", len(plain))
	}
	first := plain[len(plain)-1].DLID // a CA port, given on the command line too
	all := jsonOf("--all", "-l", fmt.Sprint(first))
	if len(all) != len(plain)+1 || all[0].DLID != first {
		t.Fatalf("--all -l %d: %d results, the first to LID %d; want %d, the first to %d", first, len(all), all[0].DLID, len(plain)+1, first)
	}
	var args []string
	for i, r := range all {
		if i > 1 && r.DLID <= all[i-1].DLID {
			t.Fatalf("not in LID order after the command line's: LID %d then %d", all[i-1].DLID, r.DLID)
		}
		args = append(args, "-l", fmt.Sprint(r.DLID))
	}
	one := jsonOf(append(args, "--concurrency=1")...)
	if len(one) != len(all) {
		t.Fatalf("%d results with -l, %d with --all", len(one), len(all))
	}
	type hop struct {
		guid      string
		in, out   uint8
		lid       uint16
		desc, typ string
	}
	hops := func(r trace.JSONResult) []hop {
		var hs []hop
		for _, h := range r.Hops {
			hs = append(hs, hop{h.NodeGUID, h.InPort, h.OutPort, h.LID, h.NodeDesc, h.NodeType})
		}
		return hs
	}
	for i := range all {
		a, b := all[i], one[i]
		if a.DLID != b.DLID || a.Status != "ok" || b.Status != "ok" || !slices.Equal(hops(a), hops(b)) {
			t.Fatalf("result %d: --all: LID %d %s %v; -l: LID %d %s %v", i, a.DLID, a.Status, hops(a), b.DLID, b.Status, hops(b))
		}
	}
}
