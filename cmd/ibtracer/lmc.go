package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/ibtracer/ibtracer_exporter/internal/nodenamemap"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// runLMC is --lmc-all: every destination becomes a path set, one trace
// per LID of its port (trace.TraceAll), printed as a set: its distinct
// paths and the hops they share, then each path.
func runLMC(ctx context.Context, tr *trace.Tracer, o *options, dests []trace.Destination, names nodenamemap.Map,
	stdout, stderr io.Writer) int {
	if o.from != 0 {
		fmt.Fprintln(stderr, "ibtracer: --lmc-all traces from the local port: give no SRC_LID with it; see ibtracer --help")
		return trace.ExitUsage
	}
	sets := make([]*trace.PathSet, len(dests))
	sem := make(chan struct{}, o.concurrency)
	var wg sync.WaitGroup
	for i, d := range dests {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int, d trace.Destination) {
			defer wg.Done()
			defer func() { <-sem }()
			sets[i] = tr.TraceAll(ctx, d)
		}(i, d)
	}
	wg.Wait()
	var worst []*trace.Result
	for _, ps := range sets {
		if names != nil {
			for _, r := range ps.Paths {
				for i := range r.Hops {
					r.Hops[i].NodeName = names.Name(uint64(r.Hops[i].NodeGUID))
				}
			}
			ps.Summarise()
		}
		worst = append(worst, ps.Worst())
	}
	switch {
	case o.format == "json":
		out := make([]trace.JSONPathSet, len(sets))
		for i, ps := range sets {
			out[i] = ps.JSON()
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			fmt.Fprintf(stderr, "ibtracer: %v\n", err)
			return trace.ExitDevice
		}
	case o.verbose:
		for i, ps := range sets {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			ps.WriteVerbose(stdout)
		}
	default:
		for _, ps := range sets {
			fmt.Fprintln(stdout, ps.Summary())
		}
	}
	if o.all {
		out := stdout
		if o.format == "json" {
			out = stderr
		}
		var all []*trace.Result
		for _, ps := range sets {
			all = append(all, ps.Paths...)
		}
		fmt.Fprintln(out, totalsOf(all))
	}
	return exitCode(worst, nil) // run refuses --health with --lmc-all
}
