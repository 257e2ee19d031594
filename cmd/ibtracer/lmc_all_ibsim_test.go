package main

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// TestAllLMCAllListsAsAllDoesOnIbsim: `--all --lmc-all` lists the CA
// ports as `--all` does (docs/architecture.md, "Listing the CA ports"):
// under ibsim, whose OpenSM cuts every table to its first MAD, from the
// local switch's forwarding, not by asking the SA LID by LID; and each
// listed port's first trace is its path set's first path, not traced
// again. The sets are the CA ports an independent SMP walk finds
// (madtest), each with its 2^LMC paths, every one equal to stock
// ibtracert's.
func TestAllLMCAllListsAsAllDoesOnIbsim(t *testing.T) {
	ibsimtest.Require(t)
	for _, lmc := range []int{1, 2} {
		t.Run("lmc"+strconv.Itoa(lmc), func(t *testing.T) {
			fab := ibsimtest.Start(t, filepath.Join(topoDir, "fattree-4x2x4.net"),
				ibsimtest.Options{KeepSM: true, SMHost: true, SMArgs: []string{"-l", strconv.Itoa(lmc)}})
			const src = "H0-0"
			want := walkedCAPorts(t, fab, src) // allrouted_ibsim_test.go
			out, errOut, code := runCLI(t, fab, src, "--all", "--lmc-all", "--no-validate", "--format=json")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var sets []trace.JSONPathSet
			if err := json.Unmarshal([]byte(out), &sets); err != nil {
				t.Fatal(err)
			}
			if len(sets) != len(want) || len(want) < 16 {
				t.Fatalf("--all --lmc-all gave %d path sets, the walk found %d CA ports (and the SM host)", len(sets), len(want))
			}
			var paths []trace.JSONResult
			for i, ps := range sets {
				if want[ps.BaseLID] != ps.Destination || int(ps.LMC) != lmc || len(ps.Paths) != 1<<lmc {
					t.Fatalf("set %d: %q base LID %d LMC %d, %d paths; the walk: %q at LID %d, LMC %d",
						i, ps.Destination, ps.BaseLID, ps.LMC, len(ps.Paths), want[ps.BaseLID], ps.BaseLID, lmc)
				}
				for k, r := range ps.Paths {
					if r.DLID != ps.BaseLID+uint16(k) || r.Status != "ok" {
						t.Fatalf("set %q path %d: DLID %d %s", ps.Destination, k, r.DLID, r.Status)
					}
				}
				paths = append(paths, ps.Paths...)
			}
			listedFromForwarding(t, fab, src, errOut)
			t.Logf("LMC %d: %d path sets, %d paths; %s", lmc, len(sets), len(paths), strings.TrimSpace(errOut))
			if n := equalIbtracert(t, fab, src, paths[0].Hops[0].LID, paths); n != len(paths) {
				t.Fatalf("%d of %d paths equal to ibtracert's", n, len(paths))
			}
		})
	}
}
