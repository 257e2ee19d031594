package localize

import (
	"testing"

	"github.com/ibtracer/ibtracer_exporter/trace"
)

// TestMismatchOffPathNamesTheRoutedLink: a hop whose validation MAD was
// routed to arrive by another port than the path's names the link the
// trace says it was routed by (Hop.ExpectedFrom), not every link in
// front of the hop.
func TestMismatchOffPathNamesTheRoutedLink(t *testing.T) {
	r := hostToHost(0)
	r.Status = trace.StatusMismatch
	// The spine 0x12 was to be reached from leaf 0x1's port 12 (its port
	// 3), while the path enters it by port 1 from leaf port 11.
	h := &r.Hops[2]
	h.Agent, h.ExpectedInPort, h.ExpectedFrom, h.ExpectedFromPort = trace.AgentMismatch, 3, 0x1, 12
	p := FromTrace(Trace{Current: r})
	want := NewLink(0x1, 12, 0x12, 3)
	if !p.Bad || len(p.Causes) != 1 || p.Causes[0] != CauseMismatch || len(p.Suspects) != 1 || p.Suspects[0] != want {
		t.Fatalf("bad %v causes %v suspects %v, want mismatch naming %v only", p.Bad, p.Causes, p.Suspects, want)
	}
}
