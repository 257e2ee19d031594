package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/ibmad/madtest"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// TestAllListsTheWalksCAPortsOnIbsim: under ibsim OpenSM's NodeRecord
// table comes cut short, so `--all` lists the CA ports from the local
// switch's forwarding (allrouted.go; it sends fewer MADs besides the
// traces' than asking the SA LID by LID would). At LMC 0, 1 and 2 it lists exactly,
// LID for LID and name for name, the CA ports' base LIDs that an
// independent directed-route walk of the fabric finds (madtest: SMPs
// only), but the local one; each trace ok, ending at its port, and
// its path hop for hop ibtracert's.
func TestAllListsTheWalksCAPortsOnIbsim(t *testing.T) {
	ibsimtest.Require(t)
	for _, lmc := range []int{0, 1, 2} {
		t.Run("lmc"+strconv.Itoa(lmc), func(t *testing.T) {
			fab := ibsimtest.Start(t, filepath.Join(topoDir, "fattree-4x2x4.net"),
				ibsimtest.Options{KeepSM: true, SMHost: true, SMArgs: []string{"-l", strconv.Itoa(lmc)}})
			const src = "H0-0"
			want := walkedCAPorts(t, fab, src)
			out, errOut, code := runCLI(t, fab, src, "--all", "--no-validate", "--format=json")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var rs []trace.JSONResult
			if err := json.Unmarshal([]byte(out), &rs); err != nil {
				t.Fatal(err)
			}
			if len(rs) != len(want) || len(want) < 16 {
				t.Fatalf("--all listed %d CA ports, the walk found %d (and the SM host)", len(rs), len(want))
			}
			t.Logf("LMC %d: %d CA ports listed, as the walk found, from %s", lmc, len(rs), strings.TrimSpace(errOut))
			for i, r := range rs {
				last := r.Hops[len(r.Hops)-1]
				if want[r.DLID] != r.Destination || r.Status != "ok" || last.NodeDesc != r.Destination || last.NodeType != "ca" {
					t.Fatalf("result %d: LID %d %q %s ending at %s %q; the walk: %q", i, r.DLID, r.Destination, r.Status, last.NodeType, last.NodeDesc, want[r.DLID])
				}
				if i > 0 && rs[i-1].DLID >= r.DLID {
					t.Fatalf("not in LID order: %d then %d", rs[i-1].DLID, r.DLID)
				}
			}
			listedFromForwarding(t, fab, src, errOut)
			if n := equalIbtracert(t, fab, src, rs[0].Hops[0].LID, rs); n != len(rs) {
				t.Fatalf("%d of %d paths equal to ibtracert's", n, len(rs))
			}
		})
	}
}

// walkedCAPorts is the description of every CA port but src's, by base
// LID, as an independent directed-route walk from src finds them
// (madtest).
func walkedCAPorts(t *testing.T, fab *ibsimtest.Fabric, src string) map[uint16]string {
	t.Helper()
	e := ibmad.NewEngine(fab.Dial(src, false), ibmad.Options{Timeout: 2 * time.Second})
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ports, err := madtest.WalkPortLIDs(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint16]string{}
	for _, p := range ports {
		if p.Node.Info.NodeType == ibmad.NodeTypeCA && p.Node.Desc != src {
			want[p.LID] = p.Node.Desc
		}
	}
	return want
}

// listedFromForwarding fails t unless an --all run from src, whose
// stderr is errOut, listed the CA ports from the forwarding: the SA was
// not asked LID by LID (besides the traces' MADs, fewer than the LIDs up
// to the leaf's LinearFDBTop, which smpquery reads).
func listedFromForwarding(t *testing.T, fab *ibsimtest.Fabric, src, errOut string) {
	t.Helper()
	split := totalsSplit.FindStringSubmatch(errOut)
	if split == nil {
		t.Fatalf("no totals: %s", errOut)
	}
	if rest, _ := strconv.Atoi(split[3]); rest >= leafTop(t, fab, src) {
		t.Fatalf("%d MADs besides the traces', %d LIDs up to the leaf's LinearFDBTop: %s", rest, leafTop(t, fab, src), errOut)
	}
}
