package trace

import (
	"context"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// drSMPs counts the directed-route SMPs the tracer's engine sent: a
// walk's, which the fast path does not send.
func drSMPs(tr *Tracer) int {
	for _, c := range tr.Engine().Stats().Classes {
		if c.Class == ibmad.ClassSubnDR {
			return int(c.Requests)
		}
	}
	return 0
}

// TestFastPathOutlivesSupportTTL: when a hop's remembered agent support
// expires (Options.SupportTTL), the fast path asks that node again (one
// vendor MAD, no SMP) and, the answer unchanged, confirms the path
// instead of walking it again: a walk reads NodeInfo, PortInfo,
// SwitchInfo and LFT blocks at every switch (docs/architecture.md, "Load
// on one switch"). An agent that started meanwhile changes the answer:
// then the path is walked, and validated by that agent.
func TestFastPathOutlivesSupportTTL(t *testing.T) {
	s := loadSim(t, "fattree-mini.net", sim.Options{})
	s.agentOn("H0-0", "H1-1")
	clock := newFakeClock()
	tr := s.tracer("H0-0", Options{SupportTTL: time.Minute, Clock: clock})
	d := Destination{LID: s.lid("H1-1")}
	ctx := context.Background()
	if r := tr.Trace(ctx, d); r.Status != StatusOK || r.FastPath {
		t.Fatalf("first trace: %s, fast path %v", r.Status, r.FastPath)
	}
	before := drSMPs(tr)
	if r := tr.Trace(ctx, d); r.Status != StatusOK || !r.FastPath {
		t.Fatalf("second trace: %s, fast path %v", r.Status, r.FastPath)
	}
	confirm := drSMPs(tr) - before // the LFT entry at each switch
	clock.Add(2 * time.Minute)     // every support answer expired
	before = drSMPs(tr)
	r := tr.Trace(ctx, d)
	if r.Status != StatusOK || !r.FastPath {
		t.Fatalf("after the support TTL: %s, fast path %v, want the path confirmed", r.Status, r.FastPath)
	}
	if n := drSMPs(tr) - before; n != confirm {
		t.Fatalf("after the support TTL: %d directed-route SMPs, want %d as the fast path before (no walk)", n, confirm)
	}
	// An agent starts on a switch of the path: once its support expires
	// the answer differs from the path's, and the walk runs.
	spine := r.Hops[2]
	var name string
	for _, n := range s.f.Nodes() {
		if n.GUID == spine.NodeGUID {
			name = n.Name
		}
	}
	s.agentOn(name)
	clock.Add(2 * time.Minute)
	r = tr.Trace(ctx, d)
	if r.Status != StatusOK || r.FastPath || r.Hops[2].ValidatedBy != ByAgent || r.Hops[2].Agent != AgentValidated {
		t.Fatalf("after an agent started on %s: %s, fast path %v, hop %s by %s; want a walk validated by its agent",
			name, r.Status, r.FastPath, r.Hops[2].Agent, r.Hops[2].ValidatedBy)
	}
}
