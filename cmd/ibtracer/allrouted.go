package main

import (
	"context"
	"slices"
	"sync"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// lister names the CA ports of --all to found as they become known and
// returns them all, in LID order (trace.Tracer.StreamCAPorts).
type lister func(ctx context.Context, found func(trace.Destination)) ([]trace.Destination, error)

// traceAllListed is --all without --lmc-all (docs/architecture.md,
// "Listing the CA ports"): the CA ports of the SA's NodeRecord table
// when the SA gives it whole; else those the local switch's forwarding
// leads to (traceAllRouted); else, when its table cannot be read, the
// SA's answers LID by LID (traceAllStreaming).
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
	f := <-fwd
	if err == nil {
		return traceAllStreaming(ctx, tr, o, src, dests, prog, func(_ context.Context, found func(trace.Destination)) ([]trace.Destination, error) {
			for _, d := range table {
				found(d)
			}
			return table, nil
		})
	}
	if f.err == nil {
		return traceAllRouted(ctx, tr, o, src, dests, prog, f.routed, f.unrouted)
	}
	return traceAllStreaming(ctx, tr, o, src, dests, prog, tr.StreamCAPorts)
}

// traceAllRouted traces every LID the local switch forwards (routed) and
// keeps those whose walk ends at a CA port with that base LID
// (trace.CAPortOf): the walks are the listing, and their facts the
// traces'. The SA is asked which of the LIDs the switch does not forward
// (unrouted), and which of the LIDs whose trace failed, are CA ports:
// those are listed with their failed traces, so that a CA port the
// fabric does not route to is reported, not dropped. A LID whose walk
// ends at a switch, a router or another LID of an LMC range is not a CA
// port's base LID and is not listed. The printed order is that of
// traceAllStreaming: the command line's destinations, then the CA ports
// in LID order.
func traceAllRouted(ctx context.Context, tr *trace.Tracer, o *options, src ibmad.PortAttributes,
	dests []trace.Destination, prog *progress, routed, unrouted []uint16) ([]trace.Destination, []*trace.Result, error) {
	q := newTraceQueue(dests)
	wait := q.work(ctx, tr, o, prog)
	var cands []trace.Destination
	for _, lid := range routed {
		cands = append(cands, trace.Destination{LID: lid})
	}
	for _, d := range skipSource(cands, src) {
		prog.grow()
		q.add(d)
	}
	var mu sync.Mutex
	named := map[uint16]trace.Destination{} // CA ports the SA named
	err := tr.CAPortsAt(ctx, unrouted, func(d trace.Destination) {
		mu.Lock()
		defer mu.Unlock()
		if q.addPort(d, src, prog) {
			named[d.LID] = d
		}
	})
	q.close()
	wait()
	if err != nil {
		return nil, nil, err
	}
	listed := map[uint16]*trace.Result{}
	var failed []uint16
	for i := len(dests); i < len(q.dests); i++ {
		lid, r := q.dests[i].LID, q.results[i]
		if d, ok := named[lid]; ok {
			r.Destination, listed[lid] = d, r
		} else if d, ok := trace.CAPortOf(r); ok {
			r.Destination, listed[lid] = d, r
		} else if !r.Status.Succeeded() {
			failed = append(failed, lid)
		}
	}
	err = tr.CAPortsAt(ctx, failed, func(d trace.Destination) {
		mu.Lock()
		named[d.LID] = d
		mu.Unlock()
	})
	if err != nil {
		return nil, nil, err
	}
	for i := len(dests); i < len(q.dests); i++ {
		if d, ok := named[q.dests[i].LID]; ok && listed[d.LID] == nil {
			q.results[i].Destination, listed[d.LID] = d, q.results[i]
		}
	}
	out := append([]trace.Destination(nil), dests...)
	results := append([]*trace.Result(nil), q.results[:len(dests)]...)
	lids := make([]uint16, 0, len(listed))
	for lid := range listed {
		lids = append(lids, lid)
	}
	slices.Sort(lids)
	for _, lid := range lids {
		out = append(out, listed[lid].Destination)
		results = append(results, listed[lid])
	}
	return out, results, nil
}
