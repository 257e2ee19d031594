package trace

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim/simtest"
)

// The port check of reached.go on paths that leave the subnet: the walk
// of a GID of another subnet ends at the router, never at the port the
// GID names, so that comparison says nothing there. Only our simulator:
// no independent peer has routers here (docs/architecture.md, "Paths
// that leave the subnet").

// twoSubnetsParallel is twoSubnets with two cables between every leaf
// and the spine, so that a switch's data plane can send a LID over the
// other cable of a pair (divergeParallel): a status-7 fault on the local
// part of a path to the remote subnet.
func twoSubnetsParallel(t *testing.T) (*simFabric, *sim.Router) {
	t.Helper()
	topo, err := sim.FatTree2(2, 1, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.AttachRouter(topo, "R0", "L1"); err != nil {
		t.Fatal(err)
	}
	local, err := sim.New(topo, sim.Options{GIDPrefix: sim.LocalSubnetPrefix})
	if err != nil {
		t.Fatal(err)
	}
	_, r, err := sim.JoinRemoteSubnet(local, "R0", sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := &simFabric{t: t, f: local, agents: map[string]*ibmad.Engine{}}
	s.agentsEverywhere()
	return s, r
}

// TestRemoteGIDFineIsLeftSubnet (a): a GID of the other subnet whose path
// is fine is left_subnet at the router, walked, confirmed by the fast
// path and walked again from a cached resolution: never wrong_port,
// though the router is not the port the GID names.
func TestRemoteGIDFineIsLeftSubnet(t *testing.T) {
	s, _ := twoSubnetsParallel(t)
	d := Destination{GID: ibmad.MakeGID(sim.RemoteSubnetPrefix, simtest.RemoteHostGUID(2))}
	for _, o := range []Options{{ResolveTTL: new(time.Hour), Clock: newFakeClock()}, {ResolveTTL: new(time.Hour), Clock: newFakeClock(), NoFastPath: true}} {
		tr := s.tracer("H0-0", o)
		for i := 0; i < 2; i++ {
			r := tr.Trace(context.Background(), d)
			last := r.Hops[len(r.Hops)-1]
			if r.Status != StatusLeftSubnet || r.Reason != "" || r.Err != nil || last.NodeGUID != sim.RouterGUID {
				t.Fatalf("no fast path %v, trace %d: %s/%s %v, last hop %s; want left_subnet at the router",
					o.NoFastPath, i, r.Status, r.Reason, r.Err, last.NodeDesc)
			}
			if r.Beyond == nil || r.Beyond.NodeDesc != "R-H2" {
				t.Fatalf("no fast path %v, trace %d: beyond %+v, want R-H2", o.NoFastPath, i, r.Beyond)
			}
		}
	}
}

// TestRemoteGIDStatus7IsMismatch (b): a status-7 fault on the local part
// of a path to the other subnet (L0's data plane sends the spine's LID
// over the other cable) is a mismatch at the spine, port_mismatch, with
// the hops up to the router: not wrong_port, which would blame the SA's
// resolution for a data-plane fault.
func TestRemoteGIDStatus7IsMismatch(t *testing.T) {
	s, _ := twoSubnetsParallel(t)
	tr := s.tracer("H0-0", Options{})
	d := Destination{GID: ibmad.MakeGID(sim.RemoteSubnetPrefix, simtest.RemoteHostGUID(0))}
	r := tr.Trace(context.Background(), d)
	if r.Status != StatusLeftSubnet || len(r.Hops) != 5 {
		t.Fatalf("healthy: %s %v, %d hops", r.Status, r.Err, len(r.Hops))
	}
	spine := r.Hops[2]
	s.divergeParallel("L0", spine)
	for i := 0; i < 2; i++ {
		r = tr.Trace(context.Background(), d)
		if r.Status != StatusMismatch || r.Reason != ReasonMismatch {
			t.Fatalf("trace %d: %s/%s %v, want mismatch/port_mismatch", i, r.Status, r.Reason, r.Err)
		}
		if !strings.Contains(r.Err.Error(), "status 7") {
			t.Fatalf("trace %d: error %q does not say status 7", i, r.Err)
		}
		if got := namedSignature(s.f, r); !strings.HasPrefix(got, "0>H0-0>") || !strings.HasSuffix(got, ">R0>0;") {
			t.Fatalf("trace %d: path %s, want H0-0 to the router", i, got)
		}
		for k, h := range r.Hops[1:] {
			if (h.Agent == AgentMismatch) != (h.NodeGUID == spine.NodeGUID) {
				t.Fatalf("trace %d: hop %d (%s) agent %s: only the spine should mismatch", i, k+1, h.NodeDesc, h.Agent)
			}
		}
	}
	s.f.ClearForwardOverrides("L0")
	if r = tr.Trace(context.Background(), d); r.Status != StatusLeftSubnet {
		t.Fatalf("repaired: %s/%s %v, want left_subnet", r.Status, r.Reason, r.Err)
	}
}

// TestRemoteGIDRouterLIDMoved (c, for a GID of another subnet): the SM
// swaps the LIDs of the router's port and host H1-0; the cached
// resolution now leads to H1-0, a port of this subnet that the GID does
// not name. It is caught (wrong_port check), resolved again at once and
// traced to the router at its new LID: left_subnet, never ok at H1-0.
// The same check for destinations of this subnet:
// TestMovedLIDNeverReportsAnotherNode, TestMovedLIDFailsWhenStillWrong.
func TestRemoteGIDRouterLIDMoved(t *testing.T) {
	s, rt := twoSubnetsParallel(t)
	var events logged
	tr := s.tracer("H0-0", Options{ResolveTTL: new(time.Hour), Clock: newFakeClock(), Log: events.log})
	d := Destination{GID: ibmad.MakeGID(sim.RemoteSubnetPrefix, simtest.RemoteHostGUID(1))}
	ctx := context.Background()
	if r := tr.Trace(ctx, d); r.Status != StatusLeftSubnet {
		t.Fatalf("before: %s/%s %v", r.Status, r.Reason, r.Err)
	}
	old := rt.Port(s.f).LID
	newLID, _ := swapLIDs(t, s.f, "R0", "H1-0")
	for i := 0; i < 2; i++ {
		r := tr.Trace(ctx, d)
		last := r.Hops[len(r.Hops)-1]
		if r.Status != StatusLeftSubnet || r.DLID != newLID || last.NodeGUID != sim.RouterGUID {
			t.Fatalf("after the move, trace %d: %s/%s %v, DLID %d at %s; want left_subnet at the router, DLID %d (was %d)",
				i, r.Status, r.Reason, r.Err, r.DLID, last.NodeDesc, newLID, old)
		}
	}
	if got := events.all(); len(got) != 1 || !strings.Contains(got[0], "resolving it again") {
		t.Fatalf("events %q, want one re-resolution", got)
	}
}
