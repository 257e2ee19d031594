package trace

import (
	"context"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// seedAgentOn runs, at node, an agent that answers in the 2005 seed
// format: the ingress port and status, no extension (ExtVersion 0, so no
// NodeGUID names who answered). A blind one cannot see the port a
// request arrived on: it answers ActualInPort 0 and status 0, as a seed
// agent on a switch's port 0 does (docs/protocol.md: 0 is "the agent
// cannot tell").
func (s *simFabric) seedAgentOn(node string, blind bool) {
	tr, err := s.f.Attach(node, 0)
	if err != nil {
		s.t.Fatal(err)
	}
	e := ibmad.NewEngine(tr, ibmad.Options{})
	s.t.Cleanup(func() { e.Close() })
	err = e.Handle(ibmad.ClassIBTracer, 1, ibmad.OUIOpenIB, []ibmad.Method{ibmad.MethodGet}, false, func(req, resp *ibmad.Packet) bool {
		resp.MAD = req.MAD
		resp.MAD.SetMethod(ibmad.MethodGetResp)
		resp.Addr = ibmad.Address{LID: req.Addr.LID, QPN: ibmad.QP1, QKey: ibmad.QP1QKey, SL: req.Addr.SL}
		if req.MAD.AttrID() == ibmad.AttrSourceRoute {
			var sr ibmad.SourceRoute
			_ = sr.UnmarshalBinary(req.MAD.VendorData())
			want, _ := sr.ExpectedInPort()
			sr.ActualInPort = req.InPort
			if blind {
				sr.ActualInPort = 0
			}
			_ = sr.MarshalTo(resp.MAD.VendorData())
			resp.MAD[ibmad.VendorDataOffset+66] = 0 // ExtVersion 0: the seed's 66 bytes only
			if !blind && want != req.InPort {
				resp.MAD.SetStatus(ibmad.StatusInvalidField)
			}
		}
		return true
	})
	if err != nil {
		s.t.Fatal(err)
	}
}

// TestSeedAnswersNeedAProvenResponder: an answer in the seed format names
// no node, so it validates a hop only when something else proved who
// answered: the walk read the hop's LID from the node itself (directed
// route), and the engine took the answer only from that LID. A path read
// from the SA proves no LID is the node's: the hop is unproven (and
// with validate auto, which asks no SMA on an SA path, stays so).
func TestSeedAnswersNeedAProvenResponder(t *testing.T) {
	s := loadSim(t, "fattree-mini.net", sim.Options{})
	s.seedAgentOn("H1-2", false)
	dlid := s.lid("H1-2")
	for _, c := range []struct {
		name string
		o    Options
		want AgentStatus
	}{
		{"walked by SMPs, agent", Options{Validate: ValidateAgent}, AgentValidated},
		{"walked by SMPs, auto", Options{Validate: ValidateAuto}, AgentValidated},
		{"read from the SA, agent", Options{Validate: ValidateAgent, Discovery: DiscoverySA}, AgentUnproven},
		{"read from the SA, auto", Options{Validate: ValidateAuto, Discovery: DiscoverySA}, AgentUnproven},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := s.tracer("H0-0", c.o).Trace(context.Background(), Destination{LID: dlid})
			if r.Status != StatusOK {
				t.Fatalf("%s %v", r.Status, r.Err)
			}
			h := r.Hops[len(r.Hops)-1]
			if h.Agent != c.want || h.ValidatedBy != ByAgent {
				t.Fatalf("the seed agent's hop: %s by %q, want %s by the agent", h.Agent, h.ValidatedBy, c.want)
			}
			if c.want == AgentUnproven && (r.Verdicts().Unproven != 1 || r.Verdicts().Validated != 0) {
				t.Fatalf("verdicts %+v", r.Verdicts())
			}
		})
	}
}

// TestSeedAnswerThatCannotTellIsNotValidated: a seed-format answer with
// ActualInPort 0 and status 0 compared nothing: the hop is
// ingress_unknown, never validated, and its link is not in the coverage,
// whatever proves who answered (issue 40, defect 1).
func TestSeedAnswerThatCannotTellIsNotValidated(t *testing.T) {
	s := loadSim(t, "fattree-mini.net", sim.Options{})
	s.seedAgentOn("H1-2", true)
	dlid := s.lid("H1-2")
	for _, mode := range []ValidateMode{ValidateAgent, ValidateAuto} {
		t.Run(string(mode), func(t *testing.T) {
			r := s.tracer("H0-0", Options{Validate: mode}).Trace(context.Background(), Destination{LID: dlid})
			if r.Status != StatusOK {
				t.Fatalf("%s %v", r.Status, r.Err)
			}
			h := r.Hops[len(r.Hops)-1]
			if h.Agent != AgentIngressUnknown || h.ValidatedBy != ByAgent {
				t.Fatalf("the blind seed agent's hop: %s by %q, want %s by the agent", h.Agent, h.ValidatedBy, AgentIngressUnknown)
			}
			before := 0 // the hops before the last validated over the traced link
			for i := 1; i < len(r.Hops)-1; i++ {
				if r.Hops[i].verdict() == AgentValidated {
					before++
				}
			}
			if v := r.Verdicts(); v.IngressUnknown != 1 || v.Validated != before {
				t.Fatalf("verdicts %+v: want the last hop ingress unknown and %d validated before it", v, before)
			}
			if c := r.Coverage(); c.Confirmed != before {
				t.Fatalf("coverage %+v: want %d confirmed, the link into the blind agent's node not among them", c, before)
			}
		})
	}
}
