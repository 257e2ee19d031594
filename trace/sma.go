package trace

import "github.com/ibtracer/ibtracer_exporter/ibmad"

// Validation by a hop's own SMA (docs/protocol.md, "Validation by the
// SMA"), and the verdicts that serve every destination within
// Options.ShareValidation: the validator's half that is not the agent's.

// smaNotAsked is the ValidationNote of a trace that wanted the SMAs but
// read its path from the SA (sawalk.go): there SMPs are refused, so
// none is sent, and the SMA is asked at no hop.
const smaNotAsked = "the SMAs were not asked: the path was read from the SA, as where this node may not send SMPs (SMP firewall, M_Key)"

// note is a trace's ValidationNote, from how it discovered its
// path and its hops: said once per trace, when the mode wanted an SMA
// somewhere (sma mode; in auto mode, a hop whose agent did not validate
// it) and the path came from the SA.
func (v *validator) note(d Discovery, hops []Hop) string {
	if d != DiscoverySA || len(hops) < 2 {
		return ""
	}
	switch v.mode {
	case ValidateSMA:
		return smaNotAsked
	case ValidateAuto:
		for _, h := range hops[1:] {
			if h.Agent == AgentUnsupported || h.Agent == AgentLost {
				return smaNotAsked
			}
		}
	}
	return ""
}

// smaValidate validates hop h by its own SMA (docs/protocol.md,
// "Validation by the SMA"): a LID-routed Get(NodeInfo) to lid travels the
// same forwarding tables as data, and the SMA answers with the port it
// arrived on (LocalPortNum), which is compared with in[count-1], the
// ingress port the tables predict for the route to lid. LocalPortNum 0
// (ibsim's switches, which fill it for directed-route SMPs only) is
// ingress_unknown, never a mismatch; no answer is lost. Within
// ShareValidation the verdict serves every destination.
func (v *validator) smaValidate(w *walk, h *Hop, lid uint16, count int, in []uint8) {
	h.RouteHops, h.ExpectedInPort, h.ValidatedBy, h.ActualInPort, h.wrongNode = count, in[count-1], BySMA, 0, false
	key := verdictKey{h.NodeGUID, lid, string(in), BySMA}
	if v.sharedVerdict(w, h, key) {
		return
	}
	defer v.shareVerdict(w, h, key)
	req := &ibmad.Request{Addr: w.addr.SMPAddress(lid), DestLMC: h.LMC} // addressing.go; the LMC the walk read
	_ = ibmad.NewLIDGet(ibmad.AttrNodeInfo, 0).MarshalTo(req.MAD[:])
	resp, err := w.do(req)
	if err != nil {
		h.Agent = AgentLost
		return
	}
	h.AgentRTT = resp.RTT
	var ni ibmad.NodeInfo
	if ibmad.SMPStatus(&resp.MAD) != 0 || ni.UnmarshalBinary(resp.MAD.SMPData()) != nil {
		h.Agent = AgentLost
		return
	}
	h.ActualInPort = ni.LocalPortNum
	switch {
	case ni.NodeGUID != h.NodeGUID: // the LID route led to another node than the walk found
		h.Agent, h.wrongNode = AgentMismatch, true
	case ni.LocalPortNum == 0:
		h.Agent = AgentIngressUnknown
	case ni.LocalPortNum == h.ExpectedInPort:
		h.Agent = AgentValidated
	default:
		h.Agent = AgentMismatch
	}
}

// sharedVerdict gives h the verdict another trace got for key within
// ShareValidation, and says whether there was one. The destination's own
// DLID is never shared: it is the traced route itself. When another
// trace's question for key is in flight it waits for that answer
// (shared.go); when there is none, the caller asks and its shareVerdict
// lands the flight.
func (v *validator) sharedVerdict(w *walk, h *Hop, key verdictKey) bool {
	if !v.share || key.lid == w.dlid {
		return false
	}
	if v.verdictOf(h, key) {
		return true
	}
	f := v.verdictFlights.join(key, w)
	if f == nil { // we lead: unless the last flight kept its verdict while we joined
		if v.verdictOf(h, key) {
			v.verdictFlights.land(key, w, struct{}{}, nil)
			return true
		}
		return false
	}
	if !f.wait(w.ctx) {
		return false
	}
	return v.verdictOf(h, key) // none kept (lost, mismatch): ask it ourselves
}

// verdictOf gives h the verdict kept for key, if there is one.
func (v *validator) verdictOf(h *Hop, key verdictKey) bool {
	kept, ok := v.verdicts.Get(key)
	if ok {
		h.Agent, h.ActualInPort, h.AgentRTT, h.ValidatedBy = kept.agent, kept.actual, kept.rtt, key.by
	}
	return ok
}

// shareVerdict keeps h's verdict for key, for ShareValidation, when it is
// one that another trace may reuse (validated or ingress_unknown), and
// lands the flight w leads for key.
func (v *validator) shareVerdict(w *walk, h *Hop, key verdictKey) {
	if !v.share || key.lid == w.dlid {
		return
	}
	if h.Agent == AgentValidated || h.Agent == AgentIngressUnknown {
		v.verdicts.Put(key, verdict{agent: h.Agent, actual: h.ActualInPort, rtt: h.AgentRTT})
	}
	v.verdictFlights.land(key, w, struct{}{}, nil)
}
