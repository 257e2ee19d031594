package trace

import (
	"sync"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// validator asks the hops of a trace whether the validation MAD arrived
// where the forwarding tables say (docs/architecture.md, "The life of a
// trace", step 5): their vendor agent (SourceRoute) or their own SMA
// (sma.go), as Options.Validate says. It keeps what traces share: which
// nodes run the agent (Options.SupportTTL) and, for
// Options.ShareValidation, the hops' verdicts, each asked by one trace at
// a time (one flight per question: shared.go).
type validator struct {
	mode ValidateMode
	oui  ibmad.OUI
	// share: verdicts serve every destination (Options.ShareValidation).
	share          bool
	support        *ttlCache[ibmad.GUID, bool]
	verdicts       *ttlCache[verdictKey, verdict]
	verdictFlights flights[verdictKey, struct{}]
	supportFlights flights[ibmad.GUID, struct{}]
}

func newValidator(o Options) *validator {
	return &validator{mode: o.Validate, oui: o.OUI, share: o.ShareValidation > 0,
		support:  newTTLCache[ibmad.GUID, bool](o.SupportTTL, cacheSize, o.Clock.Now),
		verdicts: newTTLCache[verdictKey, verdict](o.ShareValidation, cacheSize, o.Clock.Now)}
}

// Validator is who gave a hop its verdict: the JSON's validated_by.
type Validator string

// Validators.
const (
	ByAgent Validator = "agent" // our vendor agent (SourceRoute)
	BySMA   Validator = "sma"   // the node's SMA (LID-routed NodeInfo.LocalPortNum)
)

// verdictKey identifies a validation: the node, the LID asked, the
// expected route to it, and who was asked (the agent or the SMA).
type verdictKey struct {
	guid   ibmad.GUID
	lid    uint16
	inPort string
	by     Validator
}

// verdict is what a validation found, kept for other traces.
type verdict struct {
	agent  AgentStatus
	actual uint8
	rtt    time.Duration
}

// forgetNodes drops the shared verdicts of the nodes on hops: a status 7
// was seen there, and they are asked again.
func (v *validator) forgetNodes(hops []Hop) {
	on := make(map[ibmad.GUID]bool, len(hops))
	for _, h := range hops {
		on[h.NodeGUID] = true
	}
	v.verdicts.DeleteFunc(func(k verdictKey) bool { return on[k.guid] })
}

// supported asks (or remembers) whether node h runs the agent. It
// returns "" when it does; otherwise the hop's verdict: unsupported after
// an explicit "no such class" answer, which is remembered for
// Options.SupportTTL; lost when the question went unanswered (a dropped
// MAD, an agent's rate limit) or was answered with another status, which
// is not remembered: the next trace asks again.
func (v *validator) supported(w *walk, h *Hop) AgentStatus {
	if s, known := v.knownSupport(h); known {
		return s
	}
	if f := v.supportFlights.join(h.NodeGUID, w); f != nil { // another trace is asking (shared.go)
		if f.wait(w.ctx) {
			if s, known := v.knownSupport(h); known {
				return s
			}
		}
	} else {
		defer v.supportFlights.land(h.NodeGUID, w, struct{}{}, nil)
		if s, known := v.knownSupport(h); known { // kept by the last flight while we joined
			return s
		}
	}
	g := ibmad.NewVendorGet(ibmad.ClassIBTracer, v.oui, ibmad.AttrClassPortInfo, 0)
	req := &ibmad.Request{Addr: w.gmpAddr(h.LID, h), DestLMC: h.LMC} // addressing.go; the LMC the walk read
	_ = g.MarshalTo(req.MAD[:])
	resp, err := w.do(req)
	switch {
	case err != nil:
		return AgentLost
	case resp.MAD.Status() == 0:
		v.support.Put(h.NodeGUID, true)
		return ""
	case noAgent(resp.MAD.Status()):
		v.support.Put(h.NodeGUID, false)
		return AgentUnsupported
	}
	return AgentLost
}

// knownSupport is the verdict a remembered answer of h's node gives
// ("" when it runs the agent), and whether there is one.
func (v *validator) knownSupport(h *Hop) (AgentStatus, bool) {
	ok, known := v.support.Get(h.NodeGUID)
	switch {
	case !known:
		return "", false
	case ok:
		return "", true
	}
	return AgentUnsupported, true
}

// noAgent says whether st is the explicit answer of a node that serves no
// such class: "method/attribute not supported" (0x000C), which the kernel
// sends for a Get no agent registered for (docs/protocol.md), "method not
// supported" (0x0008), or "class or class version not supported" (0x0004),
// which management firmware may send for a class it does not implement.
func noAgent(st ibmad.Status) bool {
	switch st.Code() {
	case ibmad.StatusBadVersion.Code(), ibmad.StatusMethodUnsupported.Code(), ibmad.StatusMethodAttrUnsupp.Code():
		return true
	}
	return false
}

// sourceRoute sends VendorGet(SourceRoute) to lid and records the verdict
// in h. A request that goes unanswered, or is refused otherwise than with
// "no such class", makes the hop lost for this trace only; "no such class"
// means the agent is gone, and with learn (the walk; the fast path leaves
// it to the walk it falls back to) the next trace knows the node has none.
func (v *validator) sourceRoute(w *walk, h *Hop, lid uint16, count int, in []uint8, learn bool) {
	h.RouteHops, h.ExpectedInPort, h.ValidatedBy, h.wrongNode = count, in[count-1], ByAgent, false
	key := verdictKey{h.NodeGUID, lid, string(in), ByAgent}
	if v.sharedVerdict(w, h, key) { // sma.go
		return
	}
	defer v.shareVerdict(w, h, key)
	sr := ibmad.SourceRoute{HopCount: uint8(count)}
	copy(sr.InPort[:], in)
	g := ibmad.NewVendorGet(ibmad.ClassIBTracer, v.oui, ibmad.AttrSourceRoute, 0)
	_ = sr.MarshalTo(g.Data[:])
	req := &ibmad.Request{Addr: w.gmpAddr(lid, h), DestLMC: h.LMC} // the LMC the walk read
	_ = g.MarshalTo(req.MAD[:])
	resp, err := w.do(req)
	if err != nil {
		h.Agent = AgentLost
		return
	}
	h.AgentRTT = resp.RTT
	st := resp.MAD.Status()
	var got ibmad.SourceRoute
	if derr := got.UnmarshalBinary(resp.MAD.VendorData()); derr != nil || (st != 0 && !st.IsStatus7()) {
		h.Agent = AgentLost
		if learn && noAgent(st) {
			v.support.Put(h.NodeGUID, false) // the agent is gone
		}
		return
	}
	// The extension says in a flag whether the agent saw the port; the
	// seed format only by ActualInPort, 0 being "cannot tell"
	// (docs/protocol.md, "SourceRoute").
	known := got.IngressKnown() || (got.ExtVersion == 0 && got.ActualInPort != 0)
	switch {
	case got.ExtVersion == 0 && !provenResponder(h, req):
		// The seed format names no node: the answer proves nothing
		// unless its source LID (matched by the engine) is known to be
		// the node's.
		h.Agent = AgentUnproven
	case got.ExtVersion != 0 && got.NodeGUID != h.NodeGUID:
		// The LID route led to another node than the walk found.
		h.Agent, h.ActualInPort, h.wrongNode = AgentMismatch, got.ActualInPort, true
	case st.IsStatus7():
		h.Agent, h.ActualInPort = AgentMismatch, got.ActualInPort
	case !known:
		h.Agent = AgentIngressUnknown
	default:
		h.Agent, h.ActualInPort = AgentValidated, got.ActualInPort
	}
}

// provenResponder says whether an answer to req, which the engine takes
// only from the LIDs of the port req was sent to (under the LMC the walk
// read: ibmad's ibmad/pending.go), is h's node's:
// the walk read that LID from the node itself, and no router stood
// between (a GRH-routed answer comes from the router's LID).
func provenResponder(h *Hop, req *ibmad.Request) bool {
	return h.lidOwn && !req.Addr.GRHPresent
}

// validate asks every hop's agent or SMA, as Options.Validate says, all
// at once (docs/architecture.md, "The life of a trace"). It returns, per
// hop, the expected ingress ports of the route to the LID asked.
func (v *validator) validate(w *walk, hops []Hop) [][]uint8 {
	inPorts := make([][]uint8, len(hops))
	var wg sync.WaitGroup
	for i := 1; i < len(hops); i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			inPorts[i] = v.validateHop(w, hops, i)
			settleLink(hops, i) // verdicts.go
			if hops[i].Agent.Mismatched() {
				target := hops[i].LID
				if i == len(hops)-1 {
					target = w.dlid
				}
				v.attribute(w, &hops[i], target)
			}
		}(i)
	}
	wg.Wait()
	nameCheckedLinks(nil, hops) // verdicts.go
	return inPorts
}

// validateHop validates hop i. In auto mode a hop whose agent is missing
// ("no such class") or did not answer goes to its SMA (sma.go), which
// costs one SMP more; agent mode asks only the agent, sma mode only the
// SMA. A walk that reads the SA sends no SMP: the SMA is not asked.
func (v *validator) validateHop(w *walk, hops []Hop, i int) []uint8 {
	h := &hops[i]
	if h.LID == 0 || w.isOrigin(h) {
		// No LID to address the agent or the SMA at; or this node (a
		// trace from another source through the local switch): a MAD to
		// its own LID crosses no link, and its arrival port proves nothing.
		h.Agent = AgentNotAsked
		return nil
	}
	mode := v.mode
	sma := mode == ValidateSMA
	if !sma {
		if s := v.supported(w, h); s != "" {
			h.Agent, h.ValidatedBy = s, ByAgent
			if mode != ValidateAuto || w.viaSA {
				return nil
			}
			sma = true
		}
	}
	if sma && w.viaSA { // a walk that reads the SA sends no SMP
		h.Agent = AgentNotAsked
		return nil
	}
	target := h.LID
	if i == len(hops)-1 {
		target = w.dlid // the destination: the traced route itself
	}
	count, in, err := w.routeTo(hops, i, target)
	if err != nil || count == 0 { // the expected ingress is unknown, or no link is crossed: nothing to ask
		h.Agent = AgentNotAsked
		return nil
	}
	if !sma {
		v.sourceRoute(w, h, target, count, in, true)
		// Lost, or answered by an agent that could not prove who it is:
		// auto asks the SMA, whose NodeInfo names the node.
		if (h.Agent != AgentLost && h.Agent != AgentUnproven) || mode != ValidateAuto || w.viaSA {
			return in
		}
	}
	v.smaValidate(w, h, target, count, in)
	return in
}

// attribute names the switch that diverged for hop h (docs/protocol.md,
// "Which switch diverged"), a mismatch whose
// MAD, addressed to target, arrived at the hop's own node on port
// ActualInPort. The node behind that port sent it: if it is a switch
// whose LFT entry for target names another port, its forwarding diverged
// from its table. Otherwise (a CA behind the port, a switch that
// forwards as programmed, so the MAD reached it off its route: the
// divergence is further back, and one answer cannot say where; or a MAD
// answered by another node than the walk found) the hop is left
// unattributed. It costs a directed-route NodeInfo, the neighbour's LFT
// block and description, unless cached: only on a mismatch.
func (v *validator) attribute(w *walk, h *Hop, target uint16) {
	h.Diverged = nil
	if !h.Agent.Mismatched() || h.wrongNode || h.ActualInPort == 0 || h.ActualInPort == h.ExpectedInPort ||
		(h.numPorts != 0 && h.ActualInPort > h.numPorts) || len(h.DRPath) >= ibmad.MaxDRHops {
		return
	}
	n, err := w.nodeAtPath(h.DRPath.Extend(h.ActualInPort))
	if err != nil || !n.isSwitch || n.inPort == 0 {
		return
	}
	b, err := w.lftBlock(n.guid, n.path, ibmad.LFTBlockOf(target))
	if err != nil {
		return
	}
	lft := b.Port(target)
	if lft == n.inPort {
		return // it forwards as programmed: the MAD reached it off its route
	}
	d := &Divergence{Switch: n.guid, OutPort: n.inPort, LFTPort: lft}
	if desc, err := w.description(n.guid, n.path); err == nil {
		d.SwitchName = desc
	}
	h.Diverged = d
}
