package trace

import (
	"context"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim/simtest"
)

// twoSubnets is simtest.TwoSubnets with agents on every node of the local
// subnet. Only our simulator: no independent peer has routers here
// (docs/architecture.md, "Paths that leave the subnet").
func twoSubnets(t *testing.T) (*simFabric, *sim.Fabric, *sim.Router) {
	t.Helper()
	local, remote, r, err := simtest.TwoSubnets(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := &simFabric{t: t, f: local, agents: map[string]*ibmad.Engine{}}
	s.agentsEverywhere()
	return s, remote, r
}

// TestTraceLeavesSubnetAtRouter: a GID of the other subnet is resolved to
// the router port's LID, the walk stops at the router with left_subnet
// (not a failure), the router hop names the port the path leaves by, and
// the remote SA's answer gives the destination's LID and node there.
// Repeated, the fast path gives the same.
func TestTraceLeavesSubnetAtRouter(t *testing.T) {
	s, remote, r := twoSubnets(t)
	tr := s.tracer("H0-0", Options{})
	d := Destination{GID: ibmad.MakeGID(sim.RemoteSubnetPrefix, simtest.RemoteHostGUID(0))}
	for i, fast := range []bool{false, true} {
		res := tr.Trace(context.Background(), d)
		if res.Status != StatusLeftSubnet || res.Err != nil || res.FastPath != fast {
			t.Fatalf("trace %d: %s/%s fast %v: %v", i, res.Status, res.Reason, res.FastPath, res.Err)
		}
		if got, want := namedSignature(s.f, res), "0>H0-0>1;1>L0>3;1>S0>2;3>L1>4;1>R0>2;"; got != want {
			t.Fatalf("trace %d: path %s, want %s", i, got, want)
		}
		last := res.Hops[len(res.Hops)-1]
		if last.NodeType != ibmad.NodeTypeRouter || last.NodeGUID != sim.RouterGUID || last.LID != r.Port(s.f).LID || res.DLID != last.LID {
			t.Fatalf("trace %d: last hop %+v, DLID %d, want router %s at LID %d", i, last, res.DLID, sim.RouterGUID, r.Port(s.f).LID)
		}
		b := res.Beyond
		wantDLID, _ := remote.LIDOf("R-H0", 1)
		if b == nil || b.Remote == nil || b.Remote.SLID != wantDLID || b.Remote.DLID != r.Port(remote).LID ||
			b.RemoteRouter != sim.RouterGUID || b.RemoteRouterPort != 2 || b.NodeDesc != "R-H0" || b.NodeType != ibmad.NodeTypeCA || b.Note != "" {
			t.Fatalf("trace %d: beyond %+v, want R-H0 at LID %d behind router port 2 (LID %d)", i, b, wantDLID, r.Port(remote).LID)
		}
		if !strings.Contains(res.Summary(), "left the subnet at router \"R0 router\"") ||
			!strings.Contains(res.Summary(), "subnet fec0:0:0:b::/64: lid") {
			t.Fatalf("summary %q", res.Summary())
		}
		if j := res.JSON(); j.Status != "left_subnet" || j.Beyond == nil || j.Beyond.RemoteDLID != wantDLID || j.Beyond.RouterGUID != sim.RouterGUID.String() {
			t.Fatalf("JSON %+v beyond %+v", j, j.Beyond)
		}
	}
	if StatusLeftSubnet.Worse(StatusOK) || !StatusUnreachable.Worse(StatusLeftSubnet) {
		t.Fatal("left_subnet must rank with ok")
	}
}

// TestTraceRouterThatDoesNotForward: the walk reaches the router, the
// remote SA does not answer through it: the trace fails with reason
// router_not_forwarding, keeps the hops to the router, and says so.
func TestTraceRouterThatDoesNotForward(t *testing.T) {
	s, _, r := twoSubnets(t)
	r.SetForwarding(false)
	tr := s.tracer("H0-0", Options{})
	d := Destination{GID: ibmad.MakeGID(sim.RemoteSubnetPrefix, simtest.RemoteHostGUID(1))}
	res := tr.Trace(context.Background(), d)
	if res.Status != StatusUnreachable || res.Reason != ReasonRouter {
		t.Fatalf("%s/%s: %v, want unreachable/router_not_forwarding", res.Status, res.Reason, res.Err)
	}
	if n := len(res.Hops); n != 5 || res.Hops[n-1].NodeGUID != sim.RouterGUID {
		t.Fatalf("hops %s, want the path to the router", namedSignature(s.f, res))
	}
	if msg := res.Err.Error(); !strings.Contains(msg, "does not forward") || !strings.Contains(msg, "\"R0 router\"") {
		t.Fatalf("error %q does not name the router and what it does not do", msg)
	}
	if r.Dropped() == 0 {
		t.Fatal("the router dropped nothing")
	}
}

// TestTraceRemoteGIDUnknown: the remote SA knows no such port; a prefix no
// router reaches is not resolved, with a hint.
func TestTraceRemoteGIDUnknown(t *testing.T) {
	s, _, _ := twoSubnets(t)
	tr := s.tracer("H0-0", Options{})
	res := tr.Trace(context.Background(), Destination{GID: ibmad.MakeGID(sim.RemoteSubnetPrefix, 0xdead)})
	if res.Status != StatusResolve || res.Reason != ReasonSA || !strings.Contains(res.Err.Error(), "knows no such port") {
		t.Fatalf("unknown remote port: %s/%s: %v", res.Status, res.Reason, res.Err)
	}
	res = tr.Trace(context.Background(), Destination{GID: ibmad.MakeGID(0xfec0_0000_0000_00cc, 0xdead)})
	if res.Status != StatusResolve || !strings.Contains(res.Err.Error(), "does the SA know a router to it?") {
		t.Fatalf("unrouted prefix: %s/%s: %v", res.Status, res.Reason, res.Err)
	}
	// A GID of our own prefix is traced as before.
	res = tr.Trace(context.Background(), Destination{GID: ibmad.MakeGID(sim.LocalSubnetPrefix, s.f.Node("H1-1").Ports[1].GUID)})
	if res.Status != StatusOK || res.Beyond != nil {
		t.Fatalf("local GID: %s: %v", res.Status, res.Err)
	}
}
