package trace

import (
	"context"
	"fmt"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// Trace traces one destination. It never returns an error: failures are
// in the Result, classified by Status and Reason. A success reached the
// port d names (resolve.go: resolution.wrongPort).
func (t *Tracer) Trace(ctx context.Context, d Destination) *Result {
	return t.named(d, func(fresh bool) (*Result, *walk) { return t.traceOnce(ctx, d, fresh) })
}

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
// (docs/protocol.md, "The expected ingress ports"), not from the source.
// Such a trace neither uses nor fills the confirmed-path cache of the
// local port's traces. A success reached the port d names.
func (t *Tracer) TraceFrom(ctx context.Context, from uint16, d Destination) *Result {
	return t.named(d, func(fresh bool) (*Result, *walk) { return t.traceFromOnce(ctx, from, d, fresh) })
}

// begin is the start of every trace: d must be valid, the local port must
// have a LID (a switch's port 0 may not), and d resolves to a DLID, which
// goes into w and r with the port d names.
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
	t.res.noteLocalLID(src.LID)
	dest, ferr := t.res.resolve(w, d) // resolve.go
	if ferr != nil {
		return ferr
	}
	w.dest, w.dlid, r.DLID, r.Port = dest, dest.dlid, dest.dlid, dest.port
	w.addr = t.opts.AddressingFor(dest.pr, src)
	if dest.remote != nil { // a GID of another subnet: up to its router (subnet.go)
		w.addr = t.opts.routerAddressing(dest.remote.p1, src)
	}
	a := w.addr
	r.Addressing = &a
	return nil
}

// traceOnce is one trace of d, to the DLID it resolves to; a fresh one
// asks every fact itself (facts.go).
func (t *Tracer) traceOnce(ctx context.Context, d Destination, fresh bool) (*Result, *walk) {
	r := &Result{Destination: d, Start: time.Now()}
	w := newWalk(t, ctx, ibmad.PortAttributes{}, 0)
	w.fresh.Store(fresh)
	defer func() {
		r.MADs, r.SARequests, r.SharedFacts = w.madCount(), int(w.saReqs.Load()), int(w.shared.Load())
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

	if !t.opts.NoFastPath && t.opts.validates() {
		hops, ok := t.fast.confirm(w) // fastpath.go
		if ok {
			r.Hops, r.Status, r.FastPath = hops, StatusOK, true
			w.dest.remote.beyond(w, r) // subnet.go
			return r, w
		}
		if hops != nil { // the cached path changed: walk it reading every fact afresh
			w.refresh()
		}
	}
	hops, inPorts, ferr := t.discoverTrace(w, r)
	r.Hops = hops
	if ferr != nil {
		t.forgetFailed(w, dlid, d, hops)
		return finish(ferr)
	}
	if r.Count(AgentMismatch)+r.Count(AgentMismatchOtherLink) > 0 {
		// Status 7, and a divergence off the path, must mean the data plane did not follow the tables: make
		// sure the tables did not just change under us (an SM sweep) by
		// reading them again before reporting; fresh: nothing another
		// trace read (facts.go).
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
	if t.opts.validates() && r.Count(AgentLost) == 0 && r.Count(AgentMismatchOtherLink) == 0 {
		// A divergence off the path is asked again by every trace, not
		// replayed from the confirmed path (fastpath.go).
		t.fast.keep(dlid, &cachedPath{hops: append([]Hop(nil), r.Hops...), inPorts: inPorts, srcLID: src.LID, viaSA: w.viaSA})
	}
	w.dest.remote.beyond(w, r) // subnet.go
	return r, w
}

// fullTrace walks w's path and validates its hops.
func (t *Tracer) fullTrace(w *walk) ([]Hop, [][]uint8, *Error) {
	hops, ferr := w.walkPath()
	if ferr != nil {
		return hops, nil, ferr
	}
	if !t.opts.validates() {
		for i := 1; i < len(hops); i++ {
			hops[i].Agent = AgentNotAsked
		}
		return hops, nil, nil
	}
	return hops, t.val.validate(w, hops), nil
}

// discoverTrace is fullTrace with the discovery mode applied: an SMP walk
// that auto mode sees refused at the first hop is traced again from the
// SA; the SA trace's outcome stands (and is remembered when it traced).
// An SA walk of auto mode's remembered fallback that meets a question
// the SA cannot answer (isSALimit) is traced again with SMPs
// (smpAfterSALimit).
func (t *Tracer) discoverTrace(w *walk, r *Result) (hops []Hop, inPorts [][]uint8, ferr *Error) {
	defer func() { r.ValidationNote = t.val.note(r.Discovery, hops) }() // sma.go
	hops, inPorts, ferr = t.fullTrace(w)
	r.Discovery = DiscoverySMP
	if w.viaSA {
		r.Discovery = DiscoverySA
		if t.opts.Discovery == DiscoveryAuto && ferr != nil && isSALimit(ferr.Err) {
			return t.smpAfterSALimit(w, r, ferr)
		}
	}
	if w.viaSA || t.opts.Discovery != DiscoveryAuto || !t.sa.firstHopRefused(w, hops, ferr) {
		return hops, inPorts, ferr
	}
	// w's SL and GRH (addressing.go), fresh when w is
	hops2, inPorts2, ferr2 := t.retrace(w, true, false)
	w.viaSA = true // the mismatch re-walk, if any, reads the SA too
	r.Discovery = DiscoverySA
	if ferr2 == nil {
		t.sa.fellBack(true)
		return hops2, inPorts2, nil
	}
	t.sa.fellBack(false)
	ferr2.Msg = fmt.Sprintf("%s (SMPs failed first: %s)", ferr2.Msg, ferr.Msg)
	return hops2, inPorts2, ferr2
}

// smpAfterSALimit traces again with SMPs a walk that auto mode sent to
// the SA and that met the SA's limit (saErr). SMPs that trace end the
// remembered fallback: the next traces walk with SMPs. SMPs that fail
// too fail the trace, naming both.
func (t *Tracer) smpAfterSALimit(w *walk, r *Result, saErr *Error) ([]Hop, [][]uint8, *Error) {
	// w's SL and GRH (addressing.go), fresh when w is
	hops, inPorts, ferr := t.retrace(w, false, false)
	w.viaSA = false // the mismatch re-walk, if any, sends SMPs too
	r.Discovery = DiscoverySMP
	if ferr == nil {
		t.sa.smpsWork()
		return hops, inPorts, nil
	}
	ferr.Msg = fmt.Sprintf("%s (by SMPs, after the SA could not answer: %s)", ferr.Msg, saErr.Msg)
	return hops, inPorts, ferr
}

// retrace traces w's destination again with a rewalk and counts that
// walk's MADs, SA requests and shared facts as w's: the result reports
// the whole trace (Result.SharedFacts), and a trace whose re-walk relied
// on shared facts and failed is traced again afresh (named, facts.go).
func (t *Tracer) retrace(w *walk, viaSA, fresh bool) ([]Hop, [][]uint8, *Error) {
	w2 := w.rewalk(viaSA, fresh)
	hops, inPorts, ferr := t.fullTrace(w2)
	w.absorb(w2)
	return hops, inPorts, ferr
}

// traceFromOnce is one trace of d from LID from; the walk is nil when
// Trace traced it (from is the local port), which checked it already.
func (t *Tracer) traceFromOnce(ctx context.Context, from uint16, d Destination, fresh bool) (*Result, *walk) {
	r := &Result{Destination: d, From: from, Start: time.Now()}
	w := newWalk(t, ctx, ibmad.PortAttributes{}, 0)
	w.fresh.Store(fresh)
	defer func() {
		r.MADs, r.SharedFacts = w.madCount(), int(w.shared.Load())
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
	if src, err := t.e.Port(); err == nil && src.LID != 0 && ownsLocal(src, from) {
		res := t.Trace(ctx, d)
		res.From = from
		return res, nil
	}
	if ferr := t.begin(w, r, d); ferr != nil {
		return finish(ferr)
	}
	dlid := w.dlid
	hops, pre, ferr := w.fromSource(from) // walk_path.go
	r.Hops = hops
	if ferr != nil {
		t.forgetFailed(w, dlid, d, hops)
		return finish(ferr)
	}
	if len(hops) == 1 { // the source owns the destination
		r.Status = StatusOK
		return r, w
	}
	if !t.opts.validates() {
		for i := 1; i < len(hops); i++ {
			hops[i].Agent = AgentNotAsked
		}
	} else {
		w.origin = pre[:min(2, len(pre))] // this node's own hop is not asked (validate.go)
		t.val.validate(w, hops)
	}
	if n := r.Count(AgentMismatch); n > 0 {
		t.forget(dlid, d, hops, true)
		return finish(fail(StatusMismatch, ReasonMismatch, nil,
			"%d hop(s) received the trace on a port the forwarding tables do not predict (status 7)%s", n, divergenceText(hops)))
	}
	r.Status = StatusOK
	return r, w
}

// named runs one trace of d and checks that it reached the port d names.
// A trace that relied on facts other traces asked (facts.go) and did
// not succeed is traced again at once reading every fact itself: what
// it saw may be a change, and the shared answers must not hide it. When
// it reached another port with a cached resolution (the SM moved the
// LIDs since), the resolution is dropped and d traced again at once,
// resolved afresh; a trace that still reaches another port, or reached
// one with a fresh resolution, fails with reason wrong_port: never a
// success for another node.
func (t *Tracer) named(d Destination, run func(fresh bool) (*Result, *walk)) *Result {
	r, w := run(false)
	if w.reliedOnShared() && (!r.Status.Succeeded() || w.wrongPort(r) != nil) {
		r, w = again(r, run)
	}
	ferr := w.wrongPort(r)
	if ferr == nil {
		return r
	}
	t.res.resolved.Delete(d)
	if w.dest.cached {
		last := &r.Hops[len(r.Hops)-1]
		t.log(false, "msg", "destination's LID leads to another port: resolving it again", "destination", d.String(),
			"address", d.Address(), "old_dlid", r.DLID, "reached", name(last), "reached_port_guid", last.PortGUID)
		r, w = again(r, run)
		if ferr = w.wrongPort(r); ferr == nil {
			return r
		}
		t.res.resolved.Delete(d)
	}
	r.Status, r.Reason, r.Err = ferr.Status, ferr.Reason, ferr
	return r
}

// again traces once more, reading every fact afresh, after first: the
// result counts the MADs, SA requests and shared facts of both, and
// lasts from first's start.
func again(first *Result, run func(fresh bool) (*Result, *walk)) (*Result, *walk) {
	r, w := run(true)
	r.MADs += first.MADs
	r.SARequests += first.SARequests
	r.SharedFacts += first.SharedFacts
	r.Start = first.Start
	r.Duration = time.Since(first.Start)
	return r, w
}

// forgetFailed is forget for a trace that failed: unless the trace
// relied on shared facts, which named then traces again afresh, and that
// trace forgets what it must if it fails too. A failure seen on shared
// facts is not yet the destination's: forgetting its resolution there
// would also hide a LID the SM moved (the afresh trace's wrong_port).
func (t *Tracer) forgetFailed(w *walk, dlid uint16, d Destination, hops []Hop) {
	if !w.reliedOnShared() {
		t.forget(dlid, d, hops, false)
	}
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
