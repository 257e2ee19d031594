package trace

import (
	"context"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// TestDeadDestinationCostsOthersNothing: a destination that fails on every
// trace must not make the repeat traces of the healthy ones more
// expensive (issue 9, defect 4): a failed trace forgets what its own path
// touched, not every shared verdict and LFT block.
func TestDeadDestinationCostsOthersNothing(t *testing.T) {
	topo, err := sim.FatTree2(8, 4, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	s := newSim(t, topo, sim.Options{})
	s.rate = 1e9
	s.agentsEverywhere()
	dead := s.lid("H7-3")
	// The subnet manager dropped the host: its leaf has no entry for it,
	// so a trace walks across the fabric and fails at the far leaf.
	if err := s.f.SetLFTEntry("L7", dead, ibmad.LFTNoRoute); err != nil {
		t.Fatal(err)
	}
	var healthy []uint16
	for _, lid := range s.f.CALIDs() {
		if lid != dead {
			healthy = append(healthy, lid)
		}
	}
	o := Options{ShareValidation: time.Hour, Timeout: time.Second} // nothing here should time out
	alone, mixed := s.tracer("H0-0", o), s.tracer("H0-0", o)
	ctx := context.Background()
	run := func(tr *Tracer, withDead bool) (mads, traces int) {
		for _, lid := range healthy {
			r := tr.Trace(ctx, Destination{LID: lid})
			if r.Status != StatusOK {
				t.Fatalf("LID %d: %s %v", lid, r.Status, r.Err)
			}
			mads += r.MADs
			traces++
			if withDead {
				if r := tr.Trace(ctx, Destination{LID: dead}); r.Status != StatusUnreachable || r.Reason != ReasonNoRoute {
					t.Fatalf("dead LID %d: %s/%s %v", dead, r.Status, r.Reason, r.Err)
				}
			}
		}
		return mads, traces
	}
	run(alone, false) // the first, walking, traces
	run(mixed, true)
	var a, m, n int
	for round := 0; round < 3; round++ {
		ma, na := run(alone, false)
		mm, _ := run(mixed, true)
		a, m, n = a+ma, m+mm, n+na
	}
	perAlone, perMixed := float64(a)/float64(n), float64(m)/float64(n)
	t.Logf("MADs per repeat trace of %d healthy destinations: %.3f alone, %.3f with a dead destination interleaved",
		len(healthy), perAlone, perMixed)
	if perMixed > perAlone*1.1 {
		t.Fatalf("a dead destination raised the healthy destinations' MADs per trace from %.3f to %.3f (more than 10 %%)",
			perAlone, perMixed)
	}
}

// TestMismatchForgetsItsPathOnly: after a status 7 the shared verdicts of
// the nodes on that path are asked again; other nodes' stand.
func TestMismatchForgetsItsPathOnly(t *testing.T) {
	s := loadSim(t, "fattree-mini.net", sim.Options{})
	s.agentsEverywhere()
	tr := s.tracer("H0-0", Options{ShareValidation: time.Hour, Timeout: time.Second})
	ctx := context.Background()
	var paths [][]Hop
	for _, h := range []string{"H0-1", "H1-1"} {
		r := tr.Trace(ctx, Destination{LID: s.lid(h)})
		if r.Status != StatusOK {
			t.Fatalf("%s: %s %v", h, r.Status, r.Err)
		}
		paths = append(paths, r.Hops)
	}
	cached := func(g ibmad.GUID) (n int) {
		tr.val.verdicts.DeleteFunc(func(k verdictKey) bool {
			if k.guid == g {
				n++
			}
			return false
		})
		return n
	}
	far := paths[1][len(paths[1])-2] // H1-1's leaf, not on H0-1's path
	near := paths[0][1]              // H0-0's leaf, on both
	if cached(far.NodeGUID) == 0 || cached(near.NodeGUID) == 0 {
		t.Fatalf("verdicts not shared: %d %d", cached(far.NodeGUID), cached(near.NodeGUID))
	}
	tr.forget(s.lid("H0-1"), Destination{LID: s.lid("H0-1")}, paths[0], true)
	if cached(near.NodeGUID) != 0 || cached(far.NodeGUID) == 0 {
		t.Fatalf("after a mismatch on H0-1's path: %d verdicts of its leaf left, %d of another leaf", cached(near.NodeGUID), cached(far.NodeGUID))
	}
	if tr.fast.paths.Has(s.lid("H0-1")) || !tr.fast.paths.Has(s.lid("H1-1")) {
		t.Fatal("forget dropped the wrong confirmed path")
	}
}
