package localize

import (
	"slices"
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

// TestOffPathMismatchDoesNotHideAnOnPathOne: a hop mismatched over
// another link (mismatch_other_link: a divergence off this path) cannot
// cause a later on-path mismatch, so it does not hide it: both the link
// the off-path MAD was routed by and the path's link into the later
// mismatched hop are named.
func TestOffPathMismatchDoesNotHideAnOnPathOne(t *testing.T) {
	r := hostToHost(0)
	r.Status = trace.StatusMismatch
	off := &r.Hops[2]
	off.Agent, off.ExpectedInPort, off.ExpectedFrom, off.ExpectedFromPort = trace.AgentMismatchOtherLink, 3, 0x1, 12
	on := &r.Hops[3]
	on.Agent, on.ExpectedInPort = trace.AgentMismatch, on.InPort
	p := FromTrace(Trace{Current: r})
	routed := NewLink(0x1, 12, 0x12, 3)
	if !p.Bad || len(p.Suspects) != 2 || !slices.Contains(p.Suspects, routed) || !slices.Contains(p.Suspects, L2S2) {
		t.Fatalf("suspects %v, want %v (off the path) and %v (into the mismatched hop)", p.Suspects, routed, L2S2)
	}
}
