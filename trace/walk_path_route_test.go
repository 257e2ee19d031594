package trace

import (
	"context"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// TestMismatchNamesTheRoutedLink: a mismatched hop says which link its
// validation MAD was routed to arrive by (the near end: ExpectedFrom and
// ExpectedFromPort), the leaf's programmed port for the spine's LID, not
// the cable the data plane used; a validated hop says it too. Here the
// data plane sends the spine's LID over the traced cable, while its route
// was to arrive by the other: the mismatch is off the traced link
// (mismatch_other_link), and the trace is not a port mismatch.
func TestMismatchNamesTheRoutedLink(t *testing.T) {
	s := loadSim(t, "fattree-mini.net", sim.Options{})
	s.agentsEverywhere()
	tr := s.tracer("H0-0", Options{})
	dst := s.lid("H1-2")
	r := tr.Trace(context.Background(), Destination{LID: dst})
	if r.Status != StatusOK {
		t.Fatalf("healthy: %s %v", r.Status, r.Err)
	}
	spine := r.Hops[2]
	l0 := s.f.Node("L0")
	programmed := s.f.LFT("L0")[spine.LID]
	if spine.ExpectedFrom != l0.GUID || spine.ExpectedFromPort != programmed {
		t.Fatalf("validated spine: expected from %s port %d, want L0 (%s) port %d", spine.ExpectedFrom, spine.ExpectedFromPort, l0.GUID, programmed)
	}
	if h := r.Hops[1]; h.ExpectedFrom != r.Hops[0].NodeGUID || h.ExpectedFromPort != r.Hops[0].OutPort {
		t.Fatalf("first hop: expected from %s port %d, want the source %s port %d", h.ExpectedFrom, h.ExpectedFromPort,
			r.Hops[0].NodeGUID, r.Hops[0].OutPort)
	}
	other := s.divergeParallel("L0", spine)
	r = tr.Trace(context.Background(), Destination{LID: dst})
	h := r.Hops[2]
	if r.Status != StatusOK || h.Agent != AgentMismatchOtherLink {
		t.Fatalf("status %s, spine %s: want ok, and a mismatch over another link at the spine", r.Status, h.Agent)
	}
	if h.ExpectedFrom != l0.GUID || h.ExpectedFromPort != programmed || programmed == other {
		t.Fatalf("mismatched spine: expected from %s port %d, want L0 (%s) port %d (the data plane used %d)",
			h.ExpectedFrom, h.ExpectedFromPort, l0.GUID, programmed, other)
	}
}
