package main

import (
	"context"
	"fmt"
	"io"

	"github.com/ibtracer/ibtracer_exporter/internal/nodenamemap"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// runLMC is --lmc-all: every destination becomes a path set, one trace
// per LID of its port (trace.TraceAllAfter), printed as a set: its
// distinct paths and the hops they share, then each path. firsts, when
// not nil, holds each destination's first trace, made by --all's
// listing (allDestinations): not traced again.
func runLMC(ctx context.Context, tr *trace.Tracer, o *options, meter madMeter, dests []trace.Destination, firsts []*trace.Result,
	names nodenamemap.Map, stdout, stderr io.Writer) int {
	sets := make([]*trace.PathSet, len(dests))
	each(len(dests), o.concurrency, func(i int) {
		var first *trace.Result
		if firsts != nil {
			first = firsts[i]
		}
		sets[i] = tr.TraceAllAfter(ctx, dests[i], first)
	})
	var worst []*trace.Result
	for _, ps := range sets {
		if names != nil {
			nameHops(names, ps.Paths)
			ps.Summarise()
		}
		worst = append(worst, ps.Worst())
	}
	var all []*trace.Result
	for _, ps := range sets {
		all = append(all, ps.Paths...)
	}
	out := output{n: len(sets), totals: all, mads: runMADs{sent: meter.sent()},
		json: func() any {
			js := make([]trace.JSONPathSet, len(sets))
			for i, ps := range sets {
				js[i] = ps.JSON()
			}
			return js
		},
		verbose: func(w io.Writer, i int) { sets[i].WriteVerbose(w) },
		summary: func(w io.Writer, i int) { fmt.Fprintln(w, sets[i].Summary()) }}
	if !out.print(o, stdout, stderr) {
		return exitDevice
	}
	return exitCode(worst, nil) // run refuses --health with --lmc-all
}
