package trace

import (
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// ValidateMode says who validates a trace's hops (docs/architecture.md,
// "The life of a trace", step 5; docs/protocol.md, "Validation by the SMA").
type ValidateMode string

// Validation modes; their values are ibtracer's --validate values.
const (
	// ValidateAuto asks our vendor agent where one answers and the node's
	// own SMA (a LID-routed Get(NodeInfo)) everywhere else: a hop whose
	// agent is missing ("no such class") or does not answer.
	ValidateAuto ValidateMode = "auto"
	// ValidateAgent asks only our vendor agent.
	ValidateAgent ValidateMode = "agent"
	// ValidateSMA asks only the SMAs: no vendor MAD is sent.
	ValidateSMA ValidateMode = "sma"
	// ValidateOff asks nobody: a plain ibtracert-style walk.
	ValidateOff ValidateMode = "off"
)

// ParseValidate parses a validation mode ("" is auto).
func ParseValidate(s string) (ValidateMode, error) {
	switch ValidateMode(s) {
	case "":
		return ValidateAuto, nil
	case ValidateAuto, ValidateAgent, ValidateSMA, ValidateOff:
		return ValidateMode(s), nil
	}
	return "", fmt.Errorf("validate %q: want auto, agent, sma or off", s)
}

// Validator is who gave a hop its verdict: the JSON's validated_by.
type Validator string

// Validators.
const (
	ByAgent Validator = "agent" // our vendor agent (SourceRoute)
	BySMA   Validator = "sma"   // the node's SMA (LID-routed NodeInfo.LocalPortNum)
)

// withValidate settles o.Validate and o.NoValidate: NoValidate is off, ""
// is agent, and off sets NoValidate (which the walk and the fast path
// read). An unknown mode is agent: callers parse with ParseValidate.
func (o Options) withValidate() Options {
	switch {
	case o.NoValidate:
		o.Validate = ValidateOff
	case o.Validate == ValidateAuto, o.Validate == ValidateSMA, o.Validate == ValidateOff:
	default:
		o.Validate = ValidateAgent
	}
	o.NoValidate = o.Validate == ValidateOff
	return o
}

// smaNotAsked is the ValidationNote of a trace that wanted the SMAs but
// read its path from the SA (discovery.go): there SMPs are refused, so
// none is sent, and the SMA is asked at no hop.
const smaNotAsked = "the SMAs were not asked: the path was read from the SA, as where this node may not send SMPs (SMP firewall, M_Key)"

// smaUsable says whether this walk may ask the SMAs: not when it reads
// the SA instead of sending SMPs.
func (w *walk) smaUsable() bool { return !w.viaSA }

// validationNote is a trace's ValidationNote, from how it discovered its
// path and its hops: said once per trace, when the mode wanted an SMA
// somewhere (sma mode; in auto mode, a hop whose agent did not validate
// it) and the path came from the SA.
func (t *Tracer) validationNote(d Discovery, hops []Hop) string {
	if d != DiscoverySA || len(hops) < 2 {
		return ""
	}
	switch t.opts.Validate {
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
// ShareValidation the verdict serves every destination (caches.go).
func (w *walk) smaValidate(h *Hop, lid uint16, count int, in []uint8) {
	h.RouteHops, h.ExpectedInPort, h.ValidatedBy, h.ActualInPort, h.wrongNode = count, in[count-1], BySMA, 0, false
	key := verdictKey{h.NodeGUID, lid, string(in), BySMA}
	if w.sharedVerdict(h, key) {
		return
	}
	defer w.shareVerdict(h, key)
	req := &ibmad.Request{Addr: w.addr.SMPAddress(lid)} // addressing.go
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
// (flights.go); when there is none, the caller asks and its shareVerdict
// lands the flight.
func (w *walk) sharedVerdict(h *Hop, key verdictKey) bool {
	if w.t.opts.ShareValidation <= 0 || key.lid == w.dlid {
		return false
	}
	if w.verdictOf(h, key) {
		return true
	}
	done := w.t.verdictFlights.join(key, w)
	if done == nil { // we lead: unless the last flight kept its verdict while we joined
		if w.verdictOf(h, key) {
			w.t.verdictFlights.land(key, w)
			return true
		}
		return false
	}
	if !w.wait(done) {
		return false
	}
	return w.verdictOf(h, key) // none kept (lost, mismatch): ask it ourselves
}

// verdictOf gives h the verdict kept for key, if there is one.
func (w *walk) verdictOf(h *Hop, key verdictKey) bool {
	v, ok := w.t.verdicts.Get(key)
	if ok {
		h.Agent, h.ActualInPort, h.AgentRTT, h.ValidatedBy = v.agent, v.actual, v.rtt, key.by
	}
	return ok
}

// shareVerdict keeps h's verdict for key, for ShareValidation, when it is
// one that another trace may reuse (validated or ingress_unknown), and
// lands the flight w leads for key.
func (w *walk) shareVerdict(h *Hop, key verdictKey) {
	if w.t.opts.ShareValidation <= 0 || key.lid == w.dlid {
		return
	}
	if h.Agent == AgentValidated || h.Agent == AgentIngressUnknown {
		w.t.verdicts.Put(key, verdict{agent: h.Agent, actual: h.ActualInPort, rtt: h.AgentRTT})
	}
	w.t.verdictFlights.land(key, w)
}
