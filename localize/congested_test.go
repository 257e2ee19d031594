package localize

import (
	"testing"

	"github.com/ibtracer/ibtracer_exporter/linkhealth"
)

// TestCongestedLinkIsASuspect: a link the health check finds congested
// (linkhealth keeps it Healthy: congestion is not an error) makes the
// path bad, and names that link alone (docs/metrics.md, "Link evidence":
// "an unhealthy link ... congested").
func TestCongestedLinkIsASuspect(t *testing.T) {
	r := hostToHost(0)
	ph := &linkhealth.PathHealth{Healthy: true, Links: []linkhealth.Link{
		{Hop: 0, A: linkhealth.LinkEnd{NodeGUID: 0x101, Port: 1}, B: linkhealth.LinkEnd{NodeGUID: 0x1, Port: 1}, Verdict: "ok", Healthy: true},
		{Hop: 1, A: linkhealth.LinkEnd{NodeGUID: 0x1, Port: 11}, B: linkhealth.LinkEnd{NodeGUID: 0x12, Port: 1},
			Verdict: linkhealth.LinkCongested, Healthy: true, Congested: true, XmitWaitRatio: 0.2},
	}}
	p := FromTrace(Trace{Current: r, Health: ph})
	if !p.Bad || len(p.Causes) != 1 || p.Causes[0] != CauseLink || len(p.Suspects) != 1 || p.Suspects[0] != L1S2 {
		t.Fatalf("congested link: bad %v causes %v suspects %v, want bad, [link], [%v]", p.Bad, p.Causes, p.Suspects, L1S2)
	}
}
