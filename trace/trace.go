package trace

import (
	"context"
	"sync"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// Trace traces one destination. It never returns an error: failures are
// in the Result, classified by Status and Reason.
func (t *Tracer) Trace(ctx context.Context, d Destination) *Result {
	r := &Result{Destination: d, Start: time.Now()}
	w := t.newWalk(ctx, ibmad.PortAttributes{}, 0)
	defer func() {
		r.MADs = int(w.mads.Load())
		r.Duration = time.Since(r.Start)
	}()
	finish := func(e *Error) *Result {
		r.Status, r.Reason, r.Err = e.Status, e.Reason, e
		return r
	}
	if err := d.Validate(); err != nil {
		return finish(fail(StatusResolve, ReasonBadConfig, err, "%s: %v", d, err))
	}
	src, err := t.e.Port()
	if err != nil {
		return finish(fail(StatusDevice, ReasonDevice, err, "local port: %v", err))
	}
	w.src = src
	if src.LID == 0 && src.NodeType != ibmad.NodeTypeSwitch {
		return finish(fail(StatusDevice, ReasonDevice, nil,
			"the local port %s/%d has no LID yet (state %s): is a subnet manager running?", src.CA, src.PortNum, src.State))
	}
	dlid, ferr := t.resolve(w, d)
	if ferr != nil {
		return finish(ferr)
	}
	w.dlid, r.DLID = dlid, dlid

	if !t.opts.NoFastPath && !t.opts.NoValidate {
		if hops, ok := t.confirm(w); ok {
			r.Hops, r.Status, r.FastPath = hops, StatusOK, true
			return r
		}
	}
	hops, inPorts, ferr := t.fullTrace(w)
	r.Hops = hops
	if ferr != nil {
		t.forget(dlid, d)
		return finish(ferr)
	}
	if r.Count(AgentMismatch) > 0 {
		// Status 7 must mean the data plane did not follow the tables: make
		// sure the tables did not just change under us (an SM sweep) by
		// reading them again before reporting.
		w2 := t.newWalk(ctx, src, dlid)
		hops2, inPorts2, ferr2 := t.fullTrace(w2)
		w.mads.Add(w2.mads.Load())
		if ferr2 != nil {
			r.Hops = hops2
			t.forget(dlid, d)
			return finish(ferr2)
		}
		r.Hops, inPorts = hops2, inPorts2
	}
	if n := r.Count(AgentMismatch); n > 0 {
		t.forget(dlid, d)
		return finish(fail(StatusMismatch, ReasonMismatch, nil, "%d hop(s) received the trace on a port the forwarding tables do not predict (status 7)", n))
	}
	r.Status = StatusOK
	if !t.opts.NoValidate && r.Count(AgentLost) == 0 {
		t.mu.Lock()
		t.paths[dlid] = &cachedPath{hops: append([]Hop(nil), r.Hops...), inPorts: inPorts, srcLID: src.LID}
		t.mu.Unlock()
	}
	return r
}

func (t *Tracer) fullTrace(w *walk) ([]Hop, [][]uint8, *Error) {
	hops, ferr := w.walkPath()
	if ferr != nil {
		return hops, nil, ferr
	}
	if t.opts.NoValidate {
		for i := 1; i < len(hops); i++ {
			hops[i].Agent = AgentUnsupported
		}
		return hops, nil, nil
	}
	return hops, w.validate(hops), nil
}

// forget drops what a failed trace must not reuse.
func (t *Tracer) forget(dlid uint16, d Destination) {
	t.mu.Lock()
	delete(t.paths, dlid)
	delete(t.resolved, d)
	clear(t.verdicts) // something changed: ask the agents and switches again
	clear(t.blocks)
	t.mu.Unlock()
}

// confirm re-checks a cached path with one MAD per hop, all at once: the
// LFT entry for the DLID at every switch, SourceRoute at every agent, and
// NodeInfo at a destination without one. Any difference, or an agent
// support entry that expired (a new agent may have started), means walk.
func (t *Tracer) confirm(w *walk) ([]Hop, bool) {
	t.mu.Lock()
	cp := t.paths[w.dlid]
	if cp == nil || cp.srcLID != w.src.LID {
		t.mu.Unlock()
		return nil, false
	}
	now := time.Now()
	for _, h := range cp.hops[1:] {
		if s, ok := t.support[h.NodeGUID]; !ok || now.After(s.expires) {
			t.mu.Unlock()
			return nil, false
		}
	}
	hops := append([]Hop(nil), cp.hops...)
	t.mu.Unlock()

	var mu sync.Mutex
	ok := true
	bad := func() { mu.Lock(); ok = false; mu.Unlock() }
	var wg sync.WaitGroup
	last := len(hops) - 1
	for i := range hops {
		h := &hops[i]
		if h.NodeType == ibmad.NodeTypeSwitch && h.OutPort != 0 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				b, err := w.sharedBlock(h.NodeGUID, h.DRPath, ibmad.LFTBlockOf(w.dlid))
				if err != nil || b.Port(w.dlid) != h.OutPort {
					bad()
				}
			}()
		}
		if i == 0 {
			continue
		}
		switch {
		case h.Agent == AgentValidated || h.Agent == AgentIngressUnknown:
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				target := h.LID
				if i == last {
					target = w.dlid
				}
				in := cp.inPorts[i]
				w.sourceRoute(h, target, len(in), in, false)
				if h.Agent != AgentValidated && h.Agent != AgentIngressUnknown {
					bad()
				}
			}(i)
		case i == last:
			wg.Add(1)
			go func() {
				defer wg.Done()
				ni, rtt, err := w.nodeInfo(h.DRPath)
				if err != nil || ni.NodeGUID != h.NodeGUID {
					bad()
					return
				}
				h.RTT = rtt
			}()
		}
	}
	wg.Wait()
	return hops, ok
}
