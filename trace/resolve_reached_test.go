package trace

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// logged collects a tracer's events (Options.Log).
type logged struct {
	mu    sync.Mutex
	lines []string
}

func (l *logged) log(warn bool, kv ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprint(warn, kv))
}

func (l *logged) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// namedDests are the node, GUID and GID destinations of port p.
func namedDests(node string, p *sim.Port) []Destination {
	return []Destination{
		{Name: "by-node", Node: node},
		{Name: "by-guid", GUID: p.GUID},
		{Name: "by-gid", GID: ibmad.MakeGID(ibmad.DefaultGIDPrefix, p.GUID)},
	}
}

// swapLIDs gives CA ports a and b each other's LID and reroutes, as an SM
// that reassigns LIDs would; it returns their new LIDs.
func swapLIDs(t *testing.T, f *sim.Fabric, a, b string) (uint16, uint16) {
	t.Helper()
	la, lb := f.Node(a).Ports[1].LID, f.Node(b).Ports[1].LID
	if err := f.SetPortLID(a, 1, lb); err != nil {
		t.Fatal(err)
	}
	if err := f.SetPortLID(b, 1, la); err != nil {
		t.Fatal(err)
	}
	f.Reroute()
	return lb, la
}

// TestMovedLIDNeverReportsAnotherNode: destinations named by node, GUID
// and GID resolve once (resolve_ttl 1 h on a clock that does not move);
// the SM then swaps the LIDs of H1-2 and H1-1. The next trace of each
// ends at H1-2 at its new LID, resolved anew at once, never at H1-1: the
// node destination walks (the walk reached H1-1), the GUID and GID ones
// take the fast path that walk cached for H1-1's LID; both are caught.
func TestMovedLIDNeverReportsAnotherNode(t *testing.T) {
	s := loadSim(t, "fattree-mini.net", sim.Options{})
	s.agentsEverywhere()
	var events logged
	clock := newFakeClock()
	tr := s.tracer("H0-0", Options{ResolveTTL: new(time.Hour), Clock: clock, Log: events.log})
	target := s.f.Node("H1-2").Ports[1]
	ds := namedDests("H1-2", target)
	ctx := context.Background()
	for round := 0; round < 2; round++ { // the second round confirms the cached paths
		for _, d := range ds {
			r := tr.Trace(ctx, d)
			if last := r.Hops[len(r.Hops)-1]; r.Status != StatusOK || last.PortGUID != target.GUID {
				t.Fatalf("before the move, %s: %s %v, at %s", d, r.Status, r.Err, last.NodeDesc)
			}
			if round == 1 && !r.FastPath {
				t.Fatalf("before the move, %s: not confirmed by the fast path", d)
			}
		}
	}
	newLID, _ := swapLIDs(t, s.f, "H1-2", "H1-1")
	for _, d := range ds {
		r := tr.Trace(ctx, d)
		last := r.Hops[len(r.Hops)-1]
		if r.Status == StatusOK && last.PortGUID != target.GUID {
			t.Fatalf("after the move, %s: ok at %s (LID %d), another node", d, last.NodeDesc, r.DLID)
		}
		if r.Status != StatusOK || r.DLID != newLID || last.NodeDesc != "H1-2" {
			t.Fatalf("after the move, %s: %s %v, DLID %d at %s; want ok, DLID %d at H1-2, resolved anew", d, r.Status, r.Err,
				r.DLID, last.NodeDesc, newLID)
		}
	}
	if got := len(events.all()); got != len(ds) {
		t.Fatalf("%d events, want one re-resolution per destination: %q", got, events.all())
	}
}

// TestMovedLIDFailsWhenStillWrong: when the SA itself still names the
// old LID (a fresh resolution leads to another port too), the trace fails
// with wrong_port instead of reporting the other node.
func TestMovedLIDFailsWhenStillWrong(t *testing.T) {
	s := loadSim(t, "fattree-mini.net", sim.Options{})
	tr := s.tracer("H0-0", Options{Validate: ValidateOff, ResolveTTL: new(time.Duration(0))})
	target := s.f.Node("H1-2").Ports[1]
	// H1-1 takes H1-2's LID too and the tables lead it there (a
	// duplicate LID, as mid-sweep), while the SA still answers H1-2's
	// port with it: even a fresh resolution leads to another port.
	old, h11 := target.LID, s.lid("H1-1")
	if err := s.f.SetPortLID("H1-1", 1, old); err != nil {
		t.Fatal(err)
	}
	for _, sw := range []string{"L0", "S0", "S1", "L1"} {
		if err := s.f.SetLFTEntry(sw, old, s.f.LFT(sw)[h11]); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range namedDests("H1-2", target) {
		r := tr.Trace(context.Background(), d)
		if r.Status == StatusOK {
			t.Fatalf("%s: ok at %s, another node", d, r.Hops[len(r.Hops)-1].NodeDesc)
		}
		if r.Reason != ReasonWrongPort || r.Status != StatusResolve {
			t.Fatalf("%s: %s/%s %v, want resolve_failed/wrong_port", d, r.Status, r.Reason, r.Err)
		}
	}
	// A lid: destination names no port: the same LID traces to wherever
	// the tables lead, here H1-1 (docs/architecture.md).
	if r := tr.Trace(context.Background(), Destination{LID: old}); r.Status != StatusOK || r.Hops[len(r.Hops)-1].NodeDesc != "H1-1" {
		t.Fatalf("lid %d: %s %v", old, r.Status, r.Err)
	}
}

// TestLocalLIDChangeLoggedOnce: the local port's LID changing is logged
// once, at the first trace that sees it, and not again; a node
// destination whose old LID is now the local port's is not traced to
// ourselves (0 hops) but to the node, resolved anew.
func TestLocalLIDChangeLoggedOnce(t *testing.T) {
	s := loadSim(t, "fattree-mini.net", sim.Options{})
	s.agentsEverywhere()
	var events logged
	clock := newFakeClock()
	tp, err := s.f.Attach("H0-0", 0)
	if err != nil {
		t.Fatal(err)
	}
	e := ibmad.NewEngine(tp, ibmad.Options{Timeout: 100 * time.Millisecond, Retries: 1, PortRefresh: 5 * time.Millisecond})
	t.Cleanup(func() { e.Close() })
	tr := New(e, Options{Timeout: 100 * time.Millisecond, ResolveTTL: new(time.Hour), Clock: clock, Log: events.log})
	d := Destination{Node: "H1-0"}
	ctx := context.Background()
	if r := tr.Trace(ctx, d); r.Status != StatusOK || r.PathHops() != 4 {
		t.Fatalf("before: %s %v, %d hops", r.Status, r.Err, r.PathHops())
	}
	if n := len(events.all()); n != 0 {
		t.Fatalf("before any change: %q", events.all())
	}
	// H0-0 takes H1-0's LID; H1-0 gets a free one.
	oldSrc, taken := s.lid("H0-0"), s.lid("H1-0")
	free := uint16(200)
	if err := s.f.SetPortLID("H1-0", 1, free); err != nil {
		t.Fatal(err)
	}
	if err := s.f.SetPortLID("H0-0", 1, taken); err != nil {
		t.Fatal(err)
	}
	s.f.Reroute()
	waitLocalLID(t, e, taken)
	for i := 0; i < 3; i++ {
		r := tr.Trace(ctx, d)
		last := r.Hops[len(r.Hops)-1]
		if r.Status != StatusOK || last.NodeDesc != "H1-0" || r.DLID != free {
			t.Fatalf("after the change, trace %d: %s %v, DLID %d at %s after %d hops; want ok at H1-0, DLID %d",
				i, r.Status, r.Err, r.DLID, last.NodeDesc, r.PathHops(), free)
		}
	}
	want := fmt.Sprint(true, []any{"msg", "the local port's LID changed: resolving every destination again",
		"old_lid", uint32(oldSrc), "new_lid", taken})
	if got := events.all(); len(got) != 1 || got[0] != want {
		t.Fatalf("events %q, want once %q", got, want)
	}
}

// waitLocalLID waits (bounded) until the engine's background port
// refresh has seen the local LID become lid.
func waitLocalLID(t *testing.T, e *ibmad.Engine, lid uint16) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; {
		if p, err := e.Port(); err == nil && p.LID == lid {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the engine never saw the local LID become %d", lid)
		}
		time.Sleep(time.Millisecond)
	}
}
