package trace

import (
	"context"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim/simtest"
)

// TestRemoteGIDUsesTheLocalPathRecordsSL: a GID of another subnet is
// validated, up to the router, on the SL of the local SA's PathRecord to
// it (P1), without a GRH (those MADs end at the router, in our subnet),
// unless --sl/sl: is given; the remote SA query that crosses the router
// carries P1's SL and a GRH (docs/protocol.md, "SL and GRH" and "Paths
// that leave the subnet"). With SL 0 unusable, a trace on SL 0 could
// not validate a hop.
func TestRemoteGIDUsesTheLocalPathRecordsSL(t *testing.T) {
	s, _, r := twoSubnets(t)
	rp := r.Port(s.f)
	s.f.SetPathQoS(rp.GUID, sim.PathQoS{SL: 3, HopLimit: 64})
	s.f.SetSLUnusable(0, true)
	d := Destination{GID: ibmad.MakeGID(sim.RemoteSubnetPrefix, simtest.RemoteHostGUID(0))}

	res := s.tracer("H0-0", Options{}).Trace(context.Background(), d)
	if res.Status != StatusLeftSubnet || res.Beyond == nil || res.Beyond.Remote == nil {
		t.Fatalf("%s/%s: %v; beyond %+v", res.Status, res.Reason, res.Err, res.Beyond)
	}
	if a := res.Addressing; a == nil || a.SL != 3 || a.SLFrom != SLFromPathRecord || a.GRH {
		t.Fatalf("addressing %+v, want SL 3 from the PathRecord, no GRH", a)
	}
	for i, h := range res.Hops[1:] {
		if !h.Agent.AsPredicted() {
			t.Errorf("hop %d (%s): %s, want validated on SL 3", i+1, h.NodeDesc, h.Agent)
		}
	}

	res = s.tracer("H0-0", Options{SL: FixedSL(5)}).Trace(context.Background(), d)
	if a := res.Addressing; a == nil || a.SL != 5 || a.SLFrom != SLFromOption {
		t.Fatalf("--sl 5: addressing %+v", a)
	}
}

// TestRemoteSAAddress: the remote SA query goes to the router port's LID
// on P1's SL with a GRH to the SA's well-known GID of the remote prefix;
// a P1 hop limit of 0 or 1, which could not cross the router, becomes
// 255, as for any GRH to another subnet.
func TestRemoteSAAddress(t *testing.T) {
	src := ibmad.PortAttributes{GIDPrefix: sim.LocalSubnetPrefix}
	for _, hl := range []uint8{0, 1, 64} {
		p1 := ibmad.PathRecord{DGID: ibmad.MakeGID(sim.RemoteSubnetPrefix, 7), DLID: 23, SL: 4, HopLimit: hl, TClass: 9, FlowLabel: 0x12345}
		a := remoteSAAddress(p1, src)
		want := hl
		if hl <= 1 {
			want = 255
		}
		if a.LID != 23 || a.SL != 4 || !a.GRHPresent || a.HopLimit != want || a.TClass != 9 || a.FlowLabel != 0x12345 ||
			a.GID != ibmad.MakeGID(sim.RemoteSubnetPrefix, saWellKnownGUID) {
			t.Errorf("hop limit %d: %+v, want LID 23 SL 4 GRH to the SA's GID, hop limit %d", hl, a, want)
		}
	}
}
