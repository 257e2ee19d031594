package trace

import (
	"context"
	"fmt"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// TraceFrom traces d from the port whose LID is from, as `ibtracert FROM
// DST` does: the directed-route walk first follows the forwarding tables
// from the local port to from, then walks on from there toward d. A CA
// source is left by stepping back one hop along the directed route that
// reached it (its link's other end), a switch source by its forwarding
// entry for d. When from is the local port this is Trace.
//
// The agents' verdicts are for the MADs this node sends: a validation MAD
// leaves from the local port, so the ingress each hop expects is computed
// along the LID route from here to the LID it is addressed to
// (docs/protocol.md, "The expected ingress ports"), not from the source. Such a trace neither
// uses nor fills the confirmed-path cache of the local port's traces. A
// success reached the port d names (reached.go).
func (t *Tracer) TraceFrom(ctx context.Context, from uint16, d Destination) *Result {
	return t.named(d, func(fresh bool) (*Result, *walk) { return t.traceFromOnce(ctx, from, d, fresh) })
}

// traceFromOnce is one trace of d from LID from; the walk is nil when
// Trace traced it (from is the local port), which checked it already.
func (t *Tracer) traceFromOnce(ctx context.Context, from uint16, d Destination, fresh bool) (*Result, *walk) {
	r := &Result{Destination: d, From: from, Start: time.Now()}
	w := t.newWalk(ctx, ibmad.PortAttributes{}, 0)
	w.fresh.Store(fresh)
	defer func() {
		r.MADs, r.SharedFacts = int(w.mads.Load()), int(w.shared.Load())
		r.Duration = time.Since(r.Start)
	}()
	finish := func(e *Error) (*Result, *walk) {
		r.Status, r.Reason, r.Err = e.Status, e.Reason, e
		notAsked(r.Hops)
		return r, w
	}
	if from == 0 || from >= 0xC000 {
		return finish(fail(StatusResolve, ReasonBadConfig, nil, "source LID %d is not a unicast LID (1..49151)", from))
	}
	if src, err := t.e.Port(); err == nil && src.LID != 0 {
		local := Hop{LID: src.LID, LMC: src.LMC}
		if src.NodeType == ibmad.NodeTypeSwitch {
			local.LMC = 0
		}
		if owns(&local, from) {
			res := t.Trace(ctx, d)
			res.From = from
			return res, nil
		}
	}
	if ferr := t.begin(w, r, d); ferr != nil {
		return finish(ferr)
	}
	src, dlid := w.src, w.dlid

	// Reach the source the way ibtracert does: a walk toward its LID.
	toSrc := t.newWalk(ctx, src, from)
	toSrc.fresh.Store(fresh)
	toSrc.viaSA, w.viaSA = false, false // a trace from another port walks with SMPs
	pre, ferr := toSrc.walkPath()
	w.mads.Add(toSrc.mads.Load())
	w.shared.Add(toSrc.shared.Load())
	if ferr != nil {
		ferr.Msg = fmt.Sprintf("the source, LID %d: %s", from, ferr.Msg)
		return finish(ferr)
	}
	s := pre[len(pre)-1]
	h0 := Hop{NodeGUID: s.NodeGUID, PortGUID: s.PortGUID, NodeType: s.NodeType, NodeDesc: s.NodeDesc, LID: s.LID, LMC: s.LMC,
		DRPath: s.DRPath, Agent: AgentSource, RTT: s.RTT, numPorts: s.numPorts}
	hops := []Hop{h0}
	if owns(&hops[0], dlid) {
		r.Hops, r.Status = hops, StatusOK
		return r, w
	}
	seen := map[ibmad.GUID]bool{s.NodeGUID: true}
	var egress uint8
	if s.NodeType == ibmad.NodeTypeSwitch {
		if egress, ferr = w.egressFor(&hops[0], dlid); ferr != nil {
			r.Hops = hops
			return finish(ferr)
		}
		hops[0].OutPort = egress
	} else {
		// A CA or router: out of the port the walk reached it by, to the
		// node one hop back along that directed route.
		if len(pre) < 2 {
			r.Hops = hops
			return finish(fail(StatusUnreachable, ReasonNoRoute, nil, "the source LID %d is on the local node but not its port", from))
		}
		hops[0].OutPort = s.InPort
		p := pre[len(pre)-2]
		nb := Hop{Hop: 1, NodeGUID: p.NodeGUID, PortGUID: p.PortGUID, NodeType: p.NodeType, NodeDesc: p.NodeDesc,
			LID: p.LID, LMC: p.LMC, InPort: s.DRPath[len(s.DRPath)-1], DRPath: p.DRPath, RTT: p.RTT, numPorts: p.numPorts}
		hops = append(hops, nb)
		seen[nb.NodeGUID] = true
		last := &hops[1]
		if !owns(last, dlid) {
			if last.NodeType != ibmad.NodeTypeSwitch {
				r.Hops = hops
				return finish(fail(StatusUnreachable, ReasonNoRoute, nil,
					"no route to LID %d: the path ends at %s (LID %d), which does not own it", dlid, name(last), last.LID))
			}
			if egress, ferr = w.egressFor(last, dlid); ferr != nil {
				r.Hops = hops
				return finish(ferr)
			}
			last.OutPort = egress
		}
	}
	if !owns(&hops[len(hops)-1], dlid) {
		hops, ferr = w.follow(hops, egress, seen)
	}
	r.Hops = hops
	if ferr != nil {
		t.forgetFailed(w, dlid, d, hops) // facts.go
		return finish(ferr)
	}
	if t.opts.NoValidate {
		for i := 1; i < len(hops); i++ {
			hops[i].Agent = AgentNotAsked
		}
	} else {
		w.origin = pre[:min(2, len(pre))]
		w.validate(hops)
		for i := range hops[1:] {
			if h := &hops[i+1]; h.NodeGUID == src.NodeGUID {
				// This node: a MAD to its own LID never crosses a link, so
				// its arrival port proves nothing.
				h.Agent, h.ActualInPort, h.ExpectedInPort, h.RouteHops = AgentNotAsked, 0, 0, 0
			}
		}
	}
	if n := r.Count(AgentMismatch); n > 0 {
		t.forget(dlid, d, hops, true)
		return finish(fail(StatusMismatch, ReasonMismatch, nil,
			"%d hop(s) received the trace on a port the forwarding tables do not predict (status 7)%s", n, divergenceText(hops)))
	}
	r.Status = StatusOK
	return r, w
}
