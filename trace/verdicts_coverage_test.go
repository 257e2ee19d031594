package trace

import (
	"context"
	"fmt"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// predicted counts r's hops whose validation MAD arrived where the tables
// predict, over the traced link or another.
func predicted(r *Result) int {
	return r.Count(AgentValidated) + r.Count(AgentValidatedOtherLink)
}

// checkCoverage fails unless every hop of r called validated was checked
// over the traced path's link into it, as the walk found it, every hop
// called validated_other_link over another, and the coverage counts the
// first kind.
func checkCoverage(r *Result) error {
	confirmed := 0
	for i := 1; i < len(r.Hops); i++ {
		h, prev := &r.Hops[i], &r.Hops[i-1]
		traced := h.ExpectedFrom == prev.NodeGUID && h.ExpectedFromPort == prev.OutPort && h.ExpectedInPort == h.InPort
		switch h.Agent {
		case AgentValidated:
			if !traced {
				return fmt.Errorf("hop %d %s validated over %s port %d -> %d, the path enters from %s port %d -> %d",
					i, h.NodeDesc, h.ExpectedFrom, h.ExpectedFromPort, h.ExpectedInPort, prev.NodeGUID, prev.OutPort, h.InPort)
			}
			confirmed++
		case AgentValidatedOtherLink:
			if traced {
				return fmt.Errorf("hop %d %s validated_other_link over the traced link", i, h.NodeDesc)
			}
		}
	}
	if c := r.Coverage(); c.Confirmed != confirmed || c.Links != r.PathHops() {
		return fmt.Errorf("coverage %+v, want %d of %d", c, confirmed, r.PathHops())
	}
	return nil
}

// TestParallelCableDivergenceIsNotValidated: S1 sends the destination's
// LID out of a parallel cable to L1 while its table still names the first
// (the fault of issue 30). No MAD can see it: the destination's arrives
// on the port the tables predict, and L1's own LID's route enters L1 from
// another spine. So the hop after S1 must not be validated, and the
// trace's coverage must say that not every link was confirmed.
func TestParallelCableDivergenceIsNotValidated(t *testing.T) {
	for _, mode := range []ValidateMode{ValidateAuto, ValidateSMA} {
		t.Run(string(mode), func(t *testing.T) {
			s := loadSim(t, "fattree-mini.net", sim.Options{})
			tr := s.tracer("H0-0", Options{Validate: mode, NoFastPath: true})
			dst := s.lid("H1-0")
			r := tr.Trace(context.Background(), Destination{LID: dst})
			if r.Status != StatusOK || r.PathHops() != 4 || r.Hops[2].NodeDesc != "S1" {
				t.Fatalf("healthy: %s %v, %d hops, hop 2 %s", r.Status, r.Err, r.PathHops(), r.Hops[2].NodeDesc)
			}
			l1 := r.Hops[3]
			var other uint8
			for _, p := range s.f.Node("S1").Ports[1:] {
				if p.Remote != nil && p.Remote.Node.GUID == l1.NodeGUID && p.Num != r.Hops[2].OutPort {
					other = p.Num
				}
			}
			if other == 0 {
				t.Fatal("S1 has no parallel cable to L1")
			}
			if err := s.f.SetForwardOverride("S1", dst, other); err != nil {
				t.Fatal(err)
			}
			r = tr.Trace(context.Background(), Destination{LID: dst})
			if r.Status != StatusOK {
				t.Fatalf("%s %v", r.Status, r.Err)
			}
			if err := checkCoverage(r); err != nil {
				t.Fatal(err)
			}
			if h := r.Hops[3]; h.Agent == AgentValidated {
				t.Fatalf("hop 3 %s validated though no MAD crossed S1 port %d", h.NodeDesc, r.Hops[2].OutPort)
			}
			if c := r.Coverage(); c.Confirmed >= c.Links {
				t.Fatalf("coverage %s: every link confirmed", c)
			}
			if v := r.Verdicts(); v.Validated == r.PathHops() {
				t.Fatalf("%s: the path reads as fully validated", v)
			}
			t.Logf("%s: %s, %s", mode, r.Verdicts(), r.Coverage())
		})
	}
}
