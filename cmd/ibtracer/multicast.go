package main

import (
	"context"
	"fmt"
	"io"

	"github.com/ibtracer/ibtracer_exporter/internal/nodenamemap"
	"github.com/ibtracer/ibtracer_exporter/internal/strictint"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// parseMLID reads -m's MLID: a multicast LID 0xC000..0xFFFE, in hex
// (0xC001) or decimal (49153).
func parseMLID(s string) (uint16, error) {
	v, err := strictint.Parse(s)
	if err != nil || !strictint.InRange(v, 0xC000, 0xFFFE) {
		return 0, fmt.Errorf("-m %q: want a multicast LID 0xC000..0xFFFE", s)
	}
	return uint16(v.Int64()), nil
}

// runMulticast traces dst (one destination) over the MFTs of mlid and
// prints it in the form o asks for.
func runMulticast(ctx context.Context, tr *trace.Tracer, o *options, mlid uint16, dst trace.Destination, names nodenamemap.Map,
	stdout, stderr io.Writer) int {
	r := tr.TraceMulticast(ctx, mlid, o.from, dst.LID)
	results := []*trace.Result{r}
	nameHops(names, results)
	out := output{n: 1, totals: results,
		json:    func() any { return []trace.JSONResult{r.JSON()} },
		verbose: func(w io.Writer, _ int) { r.WriteMulticast(w) },
		summary: func(w io.Writer, _ int) { fmt.Fprintln(w, r.Summary()) }}
	if !out.print(o, stdout, stderr) {
		return exitDevice
	}
	return resultExit(r)
}
