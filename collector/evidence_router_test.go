package collector

import (
	"context"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/ibtracer/ibtracer_exporter/trace"
)

// TestEvidenceRouterNotForwardingBlamesNoLink: a gid: destination behind
// a router that stops forwarding fails with router_not_forwarding, its
// local hops validated up to the router. No local link is blamed: the
// router or the subnet behind it is at fault, and the destination's
// status says so (docs/metrics.md, "Link evidence"). Only our simulator:
// no independent peer has routers here.
func TestEvidenceRouterNotForwardingBlamesNoLink(t *testing.T) {
	e, _, _, router := remoteExporter(t, log.NewNopLogger(), "evidence: {enabled: true}\ninterval: 1h\n") // the scheduler never fires: the test traces
	s := e.dests.get("remote")
	e.traceOnce(context.Background(), s, time.Minute)
	if s.last.Status != trace.StatusLeftSubnet {
		t.Fatalf("before: %s %s (%v)", s.last.Status, s.last.Reason, s.last.Err)
	}
	router.SetForwarding(false)
	e.traceOnce(context.Background(), s, time.Minute)
	if s.last.Status != trace.StatusUnreachable || s.last.Reason != trace.ReasonRouter || len(s.last.Hops) < 2 {
		t.Fatalf("after: %s %s (%v), %d hops", s.last.Status, s.last.Reason, s.last.Err, len(s.last.Hops))
	}
	for _, h := range s.last.Hops[1:] {
		if h.Agent == trace.AgentLost || h.Agent == trace.AgentMismatch {
			t.Fatalf("hop %d (%s): %s; the local part should be sound", h.Hop, h.NodeDesc, h.Agent)
		}
	}
	links, plain := linkSeries(t, e)
	if len(links["ibtracer_link_suspicion"]) != 0 || plain["ibtracer_evidence_bad_paths"] != 0 {
		t.Fatalf("a router that does not forward blames local links: suspicion %v, evidence_bad_paths %v",
			links["ibtracer_link_suspicion"], plain["ibtracer_evidence_bad_paths"])
	}
	if plain["ibtracer_evidence_paths"] != 1 {
		t.Fatalf("evidence_paths %v, want 1", plain["ibtracer_evidence_paths"])
	}
}
