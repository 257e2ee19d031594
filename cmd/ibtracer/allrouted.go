package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// lister names the CA ports of --all to found as they become known and
// returns them all, in LID order (trace.Tracer.StreamCAPorts).
type lister func(ctx context.Context, found func(trace.Destination)) ([]trace.Destination, error)

// traceAllListed is --all's listing, with or without --lmc-all (docs/architecture.md,
// "Listing the CA ports"): the CA ports of the SA's NodeRecord table
// when the SA gives it whole; else those the local switch's forwarding
// leads to (traceAllRouted); else, under SA-only discovery, the SA's
// answers LID by LID (traceAllStreaming). Where the table is not whole
// and the forwarding's SMPs fail, the listing fails.
func traceAllListed(ctx context.Context, tr *trace.Tracer, o *options, src ibmad.PortAttributes,
	dests []trace.Destination, prog *progress) ([]trace.Destination, []*trace.Result, error) {
	// The local switch's forwarding is read while the SA is asked for its
	// table: the traces need it either way (its SMPs are shared facts).
	type forwarding struct {
		routed, unrouted []uint16
		err              error
	}
	fwd := make(chan forwarding, 1)
	go func() {
		var f forwarding
		f.routed, f.unrouted, f.err = tr.LocalForwarding(ctx)
		fwd <- f
	}()
	table, err := tr.CAPortsTable(ctx)
	if err == nil { // the forwarding read goes on meanwhile, its answers for the traces
		return traceAllStreaming(ctx, tr, o, src, dests, prog, func(_ context.Context, found func(trace.Destination)) ([]trace.Destination, error) {
			for _, d := range table {
				found(d)
			}
			return table, nil
		})
	}
	f := <-fwd
	switch {
	case f.err == nil:
		return traceAllRouted(ctx, tr, o, src, dests, prog, f.routed, f.unrouted)
	case errors.Is(f.err, trace.ErrSAOnly):
		return traceAllStreaming(ctx, tr, o, src, dests, prog, tr.StreamCAPortsBySA)
	}
	// Asking the SA LID by LID needs the same SMPs (the leaf's
	// LinearFDBTop): not sent again.
	return nil, nil, fmt.Errorf("the SA gave no whole NodeRecord table (%v), and the local switch's forwarding could not be read: %w", err, f.err)
}

// traceAllRouted traces every LID the local switch forwards (routed) and
// keeps those whose walk ends at a CA port with that base LID
// (trace.CAPortOf): the walks are the listing, and their facts the
// traces'. With an LMC, the LIDs aligned to it are traced first, and the
// others only where no CA port found covers them (a port's LMC range
// holds no other base LID). The SA is asked which of the LIDs the switch
// does not forward (unrouted), and which of the LIDs whose trace failed,
// are CA ports: those are listed with their failed traces, so that a CA
// port the fabric does not route to is reported, not dropped. A LID
// whose walk ends at a switch, a router or another LID of an LMC range
// is not a CA port's base LID and is not listed. The printed order is
// that of traceAllStreaming: the command line's destinations, then the
// CA ports in LID order.
func traceAllRouted(ctx context.Context, tr *trace.Tracer, o *options, src ibmad.PortAttributes,
	dests []trace.Destination, prog *progress, routed, unrouted []uint16) ([]trace.Destination, []*trace.Result, error) {
	l := &routedListing{ctx: ctx, tr: tr, o: o, src: src, prog: prog,
		traced: map[uint16]*trace.Result{}, named: map[uint16]trace.Destination{}}
	lmc := src.LMC
	if src.NodeType == ibmad.NodeTypeSwitch {
		lmc = 0
	}
	var first, later []uint16
	for _, lid := range routed {
		if lid%(1<<(lmc&7)) == 0 {
			first = append(first, lid)
		} else {
			later = append(later, lid)
		}
	}
	pre, err := l.round(dests, first, unrouted)
	if err == nil {
		_, err = l.round(nil, l.uncovered(later), nil)
	}
	if err != nil {
		return nil, nil, err
	}
	listed, failed := l.classify()
	err = tr.CAPortsAt(ctx, failed, func(d trace.Destination) {
		r := l.traced[d.LID]
		r.Destination, listed[d.LID] = d, r
	})
	if err != nil {
		return nil, nil, err
	}
	out := append([]trace.Destination(nil), dests...)
	lids := make([]uint16, 0, len(listed))
	for lid := range listed {
		lids = append(lids, lid)
	}
	slices.Sort(lids)
	for _, lid := range lids {
		out = append(out, listed[lid].Destination)
		pre = append(pre, listed[lid])
	}
	return out, pre, nil
}

// routedListing is traceAllRouted's state: every LID's trace, and the
// CA ports the SA named.
type routedListing struct {
	ctx    context.Context
	tr     *trace.Tracer
	o      *options
	src    ibmad.PortAttributes
	prog   *progress
	mu     sync.Mutex
	traced map[uint16]*trace.Result
	named  map[uint16]trace.Destination
}

// round traces pre (the command line's destinations, whose results it
// returns in order), the LIDs lids but the local port's, and the CA
// ports the SA names among askSA, o.concurrency at once.
func (l *routedListing) round(pre []trace.Destination, lids, askSA []uint16) ([]*trace.Result, error) {
	if len(pre)+len(lids)+len(askSA) == 0 {
		return nil, nil
	}
	q := newTraceQueue(pre)
	wait := q.work(l.ctx, l.tr, l.o, l.prog)
	for _, lid := range lids {
		q.addPort(trace.Destination{LID: lid}, l.src, l.prog)
	}
	err := l.tr.CAPortsAt(l.ctx, askSA, func(d trace.Destination) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if q.addPort(d, l.src, l.prog) {
			l.named[d.LID] = d
		}
	})
	q.close()
	wait()
	for i := len(pre); i < len(q.dests); i++ {
		l.traced[q.dests[i].LID] = q.results[i]
	}
	return q.results[:len(pre)], err
}

// uncovered is lids but those in the LMC range of a CA port found.
func (l *routedListing) uncovered(lids []uint16) []uint16 {
	if len(lids) == 0 {
		return nil
	}
	covered := make([]bool, ibmad.MLIDBase)
	for base, r := range l.traced {
		if _, ok := trace.CAPortOf(r); ok {
			n := uint32(1) << (r.Hops[len(r.Hops)-1].LMC & 7)
			for lid := uint32(base) + 1; lid < uint32(base)+n && lid < ibmad.MLIDBase; lid++ {
				covered[lid] = true
			}
		}
	}
	var out []uint16
	for _, lid := range lids {
		if lid < ibmad.MLIDBase && !covered[lid] {
			out = append(out, lid)
		}
	}
	return out
}

// classify returns the traces that list a CA port, by LID (those the SA
// named, and those that end at a CA port with that base LID), and the
// LIDs whose trace failed otherwise, for the SA to say.
func (l *routedListing) classify() (map[uint16]*trace.Result, []uint16) {
	listed := map[uint16]*trace.Result{}
	var failed []uint16
	for lid, r := range l.traced {
		if d, ok := l.named[lid]; ok {
			r.Destination, listed[lid] = d, r
		} else if d, ok := trace.CAPortOf(r); ok {
			r.Destination, listed[lid] = d, r
		} else if !r.Status.Succeeded() {
			failed = append(failed, lid)
		}
	}
	slices.Sort(failed)
	return listed, failed
}
