package trace

import (
	"context"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// begin is the start of every trace: d must be valid, the local port must
// have a LID (a switch's port 0 may not), and d resolves to a DLID, which
// goes into w and r with the port d names (reached.go).
func (t *Tracer) begin(w *walk, r *Result, d Destination) *Error {
	if err := d.Validate(); err != nil {
		return fail(StatusResolve, ReasonBadConfig, err, "%s: %v", d, err)
	}
	src, err := t.e.Port()
	if err != nil {
		return fail(StatusDevice, ReasonDevice, err, "local port: %v", err)
	}
	w.src = src
	if src.LID == 0 && src.NodeType != ibmad.NodeTypeSwitch {
		return fail(StatusDevice, ReasonDevice, nil,
			"the local port %s/%d has no LID yet (state %s): is a subnet manager running?", src.CA, src.PortNum, src.State)
	}
	t.noteLocalLID(src.LID)
	e, cached, ferr := t.resolve(w, d)
	if ferr != nil {
		return ferr
	}
	w.dlid, r.DLID, r.Port = e.dlid, e.dlid, e.port
	w.want, w.cachedDLID, w.remote = e.want, cached, e.remote
	w.addr = t.opts.AddressingFor(e.pr, src)
	if e.remote != nil { // a GID of another subnet: up to its router (subnet.go)
		w.addr = t.opts.routerAddressing(e.remote.p1, src)
	}
	a := w.addr
	r.Addressing = &a
	return nil
}

// Trace traces one destination. It never returns an error: failures are
// in the Result, classified by Status and Reason. A success reached the
// port d names (reached.go).
func (t *Tracer) Trace(ctx context.Context, d Destination) *Result {
	return t.named(d, func(fresh bool) (*Result, *walk) { return t.traceOnce(ctx, d, fresh) })
}

// traceOnce is one trace of d, to the DLID it resolves to; a fresh one
// asks every fact itself (facts.go).
func (t *Tracer) traceOnce(ctx context.Context, d Destination, fresh bool) (*Result, *walk) {
	r := &Result{Destination: d, Start: time.Now()}
	w := t.newWalk(ctx, ibmad.PortAttributes{}, 0)
	w.fresh.Store(fresh)
	defer func() {
		r.MADs, r.SARequests, r.SharedFacts = int(w.mads.Load()), int(w.saReqs.Load()), int(w.shared.Load())
		r.Duration = time.Since(r.Start)
	}()
	finish := func(e *Error) (*Result, *walk) {
		r.Status, r.Reason, r.Err = e.Status, e.Reason, e
		notAsked(r.Hops)
		return r, w
	}
	if ferr := t.begin(w, r, d); ferr != nil {
		return finish(ferr)
	}
	src, dlid := w.src, w.dlid

	if !t.opts.NoFastPath && !t.opts.NoValidate {
		hops, ok := t.confirm(w)
		if ok {
			r.Hops, r.Status, r.FastPath = hops, StatusOK, true
			t.beyond(w, r) // subnet.go
			return r, w
		}
		if hops != nil { // the cached path changed: walk it reading every fact afresh
			w.refresh()
		}
	}
	hops, inPorts, ferr := t.discoverTrace(w, r) // discovery.go
	r.Hops = hops
	if ferr != nil {
		t.forgetFailed(w, dlid, d, hops) // facts.go
		return finish(ferr)
	}
	if r.Count(AgentMismatch) > 0 {
		// Status 7 must mean the data plane did not follow the tables: make
		// sure the tables did not just change under us (an SM sweep) by
		// reading them again before reporting.
		// addressing.go; fresh: nothing another trace read (facts.go)
		hops2, inPorts2, ferr2 := t.retrace(w, w.viaSA, true)
		if ferr2 != nil {
			t.forget(dlid, d, r.Hops, true) // the first walk's path saw status 7
			r.Hops = hops2
			return finish(ferr2)
		}
		r.Hops, inPorts = hops2, inPorts2
	}
	if n := r.Count(AgentMismatch); n > 0 {
		t.forget(dlid, d, r.Hops, true)
		return finish(fail(StatusMismatch, ReasonMismatch, nil, "%d hop(s) received the trace on a port the forwarding tables do not predict (status 7)%s",
			n, divergenceText(r.Hops)))
	}
	r.Status = StatusOK
	if !t.opts.NoValidate && r.Count(AgentLost) == 0 {
		t.paths.Put(dlid, &cachedPath{hops: append([]Hop(nil), r.Hops...), inPorts: inPorts, srcLID: src.LID})
	}
	t.beyond(w, r) // subnet.go
	return r, w
}

func (t *Tracer) fullTrace(w *walk) ([]Hop, [][]uint8, *Error) {
	hops, ferr := w.walkPath()
	if ferr != nil {
		return hops, nil, ferr
	}
	if t.opts.NoValidate {
		for i := 1; i < len(hops); i++ {
			hops[i].Agent = AgentNotAsked
		}
		return hops, nil, nil
	}
	return hops, w.validate(hops), nil
}

// notAsked marks the hops a failed trace did not validate, so that no
// report shows an empty verdict.
func notAsked(hops []Hop) {
	for i := range hops {
		if hops[i].Agent == "" {
			hops[i].Agent = AgentNotAsked
		}
	}
}
