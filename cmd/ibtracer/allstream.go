package main

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// traceQueue is the destinations of a run in the order they became
// known, and their results: o.concurrency workers take them in turn.
// It grows while the SA still names CA ports (--all), so a worker that
// finds it empty waits until a port is added or the listing ends.
type traceQueue struct {
	mu      sync.Mutex
	cond    *sync.Cond
	dests   []trace.Destination
	results []*trace.Result
	next    int
	closed  bool // no destination comes any more
}

func newTraceQueue(dests []trace.Destination) *traceQueue {
	q := &traceQueue{dests: append([]trace.Destination(nil), dests...)}
	q.results = make([]*trace.Result, len(q.dests))
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *traceQueue) add(d trace.Destination) {
	q.mu.Lock()
	q.dests = append(q.dests, d)
	q.results = append(q.results, nil)
	q.mu.Unlock()
	q.cond.Signal()
}

// addPort adds d, a CA port a listing named, unless it is the local
// port (skipSource), and says whether it did.
func (q *traceQueue) addPort(d trace.Destination, src ibmad.PortAttributes, prog *progress) bool {
	if len(skipSource([]trace.Destination{d}, src)) == 0 {
		return false
	}
	prog.grow()
	q.add(d)
	return true
}

func (q *traceQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.cond.Broadcast()
}

// take returns the next destination to trace and its index, or false
// when the queue is closed and every destination was taken.
func (q *traceQueue) take() (int, trace.Destination, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.next == len(q.dests) && !q.closed {
		q.cond.Wait()
	}
	if q.next == len(q.dests) {
		return 0, trace.Destination{}, false
	}
	i := q.next
	q.next++
	return i, q.dests[i], true
}

func (q *traceQueue) put(i int, r *trace.Result) {
	q.mu.Lock()
	q.results[i] = r
	q.mu.Unlock()
}

// work starts o.concurrency workers that trace q's destinations as they
// come; the function it returns waits for them (after q.close).
func (q *traceQueue) work(ctx context.Context, tr *trace.Tracer, o *options, prog *progress) (wait func()) {
	var wg sync.WaitGroup
	for range o.concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i, d, ok := q.take()
				if !ok {
					return
				}
				r := traceOne(ctx, tr, o, d)
				q.put(i, r)
				prog.done(r)
			}
		}()
	}
	return wg.Wait
}

// traceAllStreaming is --all's listing and traces: the destinations of
// the command line and every CA port the SA knows but the local one,
// each traced as soon as the SA has named it (trace.Tracer.StreamCAPorts)
// rather than after the whole list, at most o.concurrency at once
// (docs/architecture.md, "Facts shared by a run"). It returns the
// destinations and their results in the order a run prints them: those
// of the command line, then the listed ports in LID order, as the list
// was printed before it was streamed. When the listing fails, the
// traces of the command line's destinations that ran are dropped with
// it and err says why (the run prints no result, as before).
func traceAllStreaming(ctx context.Context, tr *trace.Tracer, o *options, src ibmad.PortAttributes,
	dests []trace.Destination, prog *progress, list lister) ([]trace.Destination, []*trace.Result, error) {
	q := newTraceQueue(dests)
	wait := q.work(ctx, tr, o, prog)
	all, err := list(ctx, func(d trace.Destination) { q.addPort(d, src, prog) })
	q.close()
	wait()
	if err != nil {
		return nil, nil, err
	}
	// The printed order: the command line's, then the list's in LID order.
	byLID := make(map[uint16]*trace.Result, len(q.dests))
	for i := len(dests); i < len(q.dests); i++ {
		byLID[q.dests[i].LID] = q.results[i]
	}
	out := append([]trace.Destination(nil), dests...)
	results := append([]*trace.Result(nil), q.results[:len(dests)]...)
	for _, d := range skipSource(all, src) {
		r := byLID[d.LID]
		if r == nil { // not named while streaming: cannot be, but never drop a port
			r = traceOne(ctx, tr, o, d)
		}
		out = append(out, d)
		results = append(results, r)
	}
	return out, results, nil
}

// allDestinations adds --all's CA ports to dests and traces them all
// (traceAllListed: from the SA's table, or the local switch's
// forwarding), returning their results, in the order of the returned
// destinations; with --lmc-all those are the first traces of the path
// sets (runLMC). code is the exit status of a failed listing (its error
// written to stderr), 0 otherwise; without --all it returns dests as
// they are.
func allDestinations(ctx context.Context, tr *trace.Tracer, o *options, dests []trace.Destination, prog *progress,
	stderr io.Writer) (_ []trace.Destination, results []*trace.Result, code int) {
	if !o.all {
		return dests, nil, 0
	}
	src, err := tr.Engine().Port() // as the listing's own first read: its error is the listing's
	if err == nil {
		dests, results, err = traceAllListed(ctx, tr, o, src, dests, prog) // allrouted.go
	}
	if err != nil {
		prog.finish()
		fmt.Fprintf(stderr, "ibtracer: --all: %v\n", err)
		return nil, nil, exitResolve
	}
	return dests, results, 0
}

// traceOne traces d from the local port, or from --from's port.
func traceOne(ctx context.Context, tr *trace.Tracer, o *options, d trace.Destination) *trace.Result {
	if o.from != 0 {
		return tr.TraceFrom(ctx, o.from, d)
	}
	return tr.Trace(ctx, d)
}
