package trace

import (
	"context"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// TestSMAZeroAtSwitchIsIngressUnknown: a switch whose SMA answers
// LocalPortNum 0 to a LID-routed SMP (ibsim's behaviour, chosen here per
// switch and per fabric) cannot tell its ingress port: ingress_unknown,
// never a mismatch; CAs still validate.
func TestSMAZeroAtSwitchIsIngressUnknown(t *testing.T) {
	s := loadSim(t, "fattree-mini.net", sim.Options{})
	if err := s.f.SetSwitchLocalPortZero("S0", true); err != nil {
		t.Fatal(err)
	}
	tr := s.tracer("H0-0", Options{Validate: ValidateSMA})
	for _, lid := range s.everyLID() {
		r := tr.Trace(context.Background(), Destination{LID: lid})
		if r.Status != StatusOK {
			t.Fatalf("LID %d: %s %v", lid, r.Status, r.Err)
		}
		for _, h := range r.Hops[1:] {
			want := AgentValidated
			if h.NodeDesc == "S0" {
				want = AgentIngressUnknown
			}
			if got := h.Agent; (got != want && !(want == AgentValidated && got.AsPredicted())) || h.ValidatedBy != BySMA {
				t.Fatalf("LID %d hop %d %s: %s by %q, want %s by sma", lid, h.Hop, h.NodeDesc, h.Agent, h.ValidatedBy, want)
			}
		}
	}
	all := loadSim(t, "fattree-mini.net", sim.Options{SwitchLocalPortZero: true})
	r := all.tracer("H0-0", Options{Validate: ValidateSMA}).Trace(context.Background(), Destination{LID: all.lid("H1-2")})
	v := r.Verdicts()
	if r.Status != StatusOK || v.IngressUnknown != 3 || v.Validated+v.ValidatedOtherLink != 1 {
		t.Fatalf("every switch as ibsim: %s, %s; want 3 switches ingress unknown, the CA validated", r.Status, v)
	}
}
