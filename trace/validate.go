package trace

import (
	"fmt"
	"sync"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

func (w *walk) remember(path ibmad.DRPath, n nodeID) {
	n.path = path
	w.mu.Lock()
	w.nodeAt[string(path)] = n
	w.mu.Unlock()
}

// nodeAtPath returns the node a DR path leads to, asking only once.
func (w *walk) nodeAtPath(path ibmad.DRPath) (nodeID, error) {
	w.mu.Lock()
	n, ok := w.nodeAt[string(path)]
	w.mu.Unlock()
	if ok {
		return n, nil
	}
	if w.viaSA {
		return w.saNodeAtPath(path)
	}
	ni, _, err := w.nodeInfo(path)
	if err != nil {
		return nodeID{}, err
	}
	n = nodeID{guid: ni.NodeGUID, inPort: ni.LocalPortNum, isSwitch: ni.NodeType == ibmad.NodeTypeSwitch, path: path}
	w.remember(path, n)
	return n, nil
}

// routeTo follows the forwarding tables from the source toward target, the
// LID of hop i, and returns the number of links to it and the expected
// ingress port at each (docs/protocol.md, "The expected ingress ports"): in a fat tree the route to a
// switch's own LID need not be a prefix of the route to the DLID. It also
// sets hop i's ExpectedFrom and ExpectedFromPort: the node and port the
// route's last link leaves from.
func (w *walk) routeTo(hops []Hop, i int, target uint16) (int, []uint8, error) {
	want := hops[i].NodeGUID
	var cur nodeID
	var in []uint8
	var from ibmad.GUID
	var fromPort uint8
	start := hops
	if w.origin != nil { // a trace from another source (source.go): the MADs leave from here
		start = w.origin
	}
	if start[0].NodeType == ibmad.NodeTypeSwitch {
		cur = nodeID{guid: start[0].NodeGUID, isSwitch: true, path: ibmad.DRPath{}}
	} else {
		cur = nodeID{guid: start[1].NodeGUID, inPort: start[1].InPort, isSwitch: start[1].NodeType == ibmad.NodeTypeSwitch, path: start[1].DRPath}
		in = append(in, start[1].InPort)
		from, fromPort = start[0].NodeGUID, start[0].OutPort
	}
	for {
		if cur.guid == want {
			hops[i].ExpectedFrom, hops[i].ExpectedFromPort = from, fromPort
			return len(in), in, nil
		}
		if !cur.isSwitch {
			return 0, nil, fmt.Errorf("the LID route to %d ends at CA %s", target, cur.guid)
		}
		if len(in) >= ibmad.MaxTraceHops || len(cur.path) >= ibmad.MaxDRHops {
			return 0, nil, fmt.Errorf("the LID route to %d is longer than %d hops", target, ibmad.MaxTraceHops)
		}
		b, err := w.lftBlock(cur.guid, cur.path, ibmad.LFTBlockOf(target))
		if err != nil {
			return 0, nil, err
		}
		port := b.Port(target)
		if port == 0 || port == ibmad.LFTNoRoute {
			return 0, nil, fmt.Errorf("switch %s has no forwarding entry for LID %d", cur.guid, target)
		}
		next, err := w.nodeAtPath(cur.path.Extend(port))
		if err != nil {
			return 0, nil, err
		}
		in = append(in, next.inPort)
		from, fromPort = cur.guid, port
		cur = next
	}
}

// supported asks (or remembers) whether node h runs the agent. It
// returns "" when it does; otherwise the hop's verdict: unsupported after
// an explicit "no such class" answer, which is remembered for
// Options.SupportTTL; lost when the question went unanswered (a dropped
// MAD, an agent's rate limit) or was answered with another status, which
// is not remembered: the next trace asks again.
func (w *walk) supported(h *Hop) AgentStatus {
	if v, known := w.knownSupport(h); known {
		return v
	}
	if done := w.t.supportFlights.join(h.NodeGUID, w); done != nil { // another trace is asking (flights.go)
		if w.wait(done) {
			if v, known := w.knownSupport(h); known {
				return v
			}
		}
	} else {
		defer w.t.supportFlights.land(h.NodeGUID, w)
		if v, known := w.knownSupport(h); known { // kept by the last flight while we joined
			return v
		}
	}
	v := ibmad.NewVendorGet(ibmad.ClassIBTracer, w.t.opts.OUI, ibmad.AttrClassPortInfo, 0)
	req := &ibmad.Request{Addr: w.gmpAddr(h.LID, h)} // addressing.go
	_ = v.MarshalTo(req.MAD[:])
	resp, err := w.do(req)
	switch {
	case err != nil:
		return AgentLost
	case resp.MAD.Status() == 0:
		w.t.support.Put(h.NodeGUID, true)
		return ""
	case noAgent(resp.MAD.Status()):
		w.t.support.Put(h.NodeGUID, false)
		return AgentUnsupported
	}
	return AgentLost
}

// knownSupport is the verdict a remembered answer of h's node gives
// ("" when it runs the agent), and whether there is one.
func (w *walk) knownSupport(h *Hop) (AgentStatus, bool) {
	ok, known := w.t.support.Get(h.NodeGUID)
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
func (w *walk) sourceRoute(h *Hop, lid uint16, count int, in []uint8, learn bool) {
	h.RouteHops, h.ExpectedInPort, h.ValidatedBy, h.wrongNode = count, in[count-1], ByAgent, false
	key := verdictKey{h.NodeGUID, lid, string(in), ByAgent}
	if w.sharedVerdict(h, key) { // sma.go
		return
	}
	defer w.shareVerdict(h, key)
	sr := ibmad.SourceRoute{HopCount: uint8(count)}
	copy(sr.InPort[:], in)
	v := ibmad.NewVendorGet(ibmad.ClassIBTracer, w.t.opts.OUI, ibmad.AttrSourceRoute, 0)
	_ = sr.MarshalTo(v.Data[:])
	req := &ibmad.Request{Addr: w.gmpAddr(lid, h)}
	_ = v.MarshalTo(req.MAD[:])
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
			w.t.support.Put(h.NodeGUID, false) // the agent is gone
		}
		return
	}
	known := got.ExtVersion == 0 || got.IngressKnown()
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
// only from the LID req was sent to (ibmad's match.go), is h's node's:
// the walk read that LID from the node itself, and no router stood
// between (a GRH-routed answer comes from the router's LID).
func provenResponder(h *Hop, req *ibmad.Request) bool {
	return h.lidOwn && !req.Addr.GRHPresent
}

// validate asks every hop's agent or SMA, as Options.Validate says, all
// at once (docs/architecture.md, "The life of a trace"). It returns, per
// hop, the expected ingress ports of the route to the LID asked.
func (w *walk) validate(hops []Hop) [][]uint8 {
	inPorts := make([][]uint8, len(hops))
	var wg sync.WaitGroup
	for i := 1; i < len(hops); i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			inPorts[i] = w.validateHop(hops, i)
			settleLink(hops, i) // coverage.go
			if hops[i].Agent == AgentMismatch {
				target := hops[i].LID
				if i == len(hops)-1 {
					target = w.dlid
				}
				w.attribute(&hops[i], target) // diverge.go
			}
		}(i)
	}
	wg.Wait()
	nameCheckedLinks(nil, hops) // coverage.go
	return inPorts
}

// validateHop validates hop i. In auto mode a hop whose agent is missing
// ("no such class") or did not answer goes to its SMA (sma.go), which
// costs one SMP more; agent mode asks only the agent, sma mode only the
// SMA. A walk that reads the SA sends no SMP: the SMA is not asked.
func (w *walk) validateHop(hops []Hop, i int) []uint8 {
	h := &hops[i]
	if h.LID == 0 { // no LID to address the agent or the SMA at
		h.Agent = AgentNotAsked
		return nil
	}
	mode := w.t.opts.Validate
	sma := mode == ValidateSMA
	if !sma {
		if v := w.supported(h); v != "" {
			h.Agent, h.ValidatedBy = v, ByAgent
			if mode != ValidateAuto || !w.smaUsable() {
				return nil
			}
			sma = true
		}
	}
	if sma && !w.smaUsable() {
		h.Agent = AgentNotAsked
		return nil
	}
	target := h.LID
	if i == len(hops)-1 {
		target = w.dlid // the destination: the traced route itself
	}
	count, in, err := w.routeTo(hops, i, target)
	if err != nil { // the expected ingress is unknown: nothing to ask
		h.Agent = AgentNotAsked
		return nil
	}
	if !sma {
		w.sourceRoute(h, target, count, in, true)
		// Lost, or answered by an agent that could not prove who it is:
		// auto asks the SMA, whose NodeInfo names the node.
		if (h.Agent != AgentLost && h.Agent != AgentUnproven) || mode != ValidateAuto || !w.smaUsable() {
			return in
		}
	}
	w.smaValidate(h, target, count, in)
	return in
}
