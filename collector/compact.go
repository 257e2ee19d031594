package collector

import (
	"unique"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// compact trims what a destination keeps of its last trace (for /traces
// and the logs) until the next one: the hops in a slice of their exact
// length (the walk grows it by appending), their directed routes in one
// array, and their node descriptions and names shared with every other
// destination whose path crosses the same nodes (at 10,000 destinations,
// a few leaves and spines appear in thousands of paths).
func compact(r *trace.Result) {
	if r == nil || len(r.Hops) == 0 {
		return
	}
	hops := make([]trace.Hop, len(r.Hops))
	copy(hops, r.Hops)
	n := 0
	for i := range hops {
		n += len(hops[i].DRPath)
	}
	dr := make(ibmad.DRPath, 0, n)
	for i := range hops {
		h := &hops[i]
		h.NodeDesc = intern(h.NodeDesc)
		h.NodeName = intern(h.NodeName)
		if h.DRPath != nil {
			start := len(dr)
			dr = append(dr, h.DRPath...)
			h.DRPath = dr[start:len(dr):len(dr)]
		}
	}
	r.Hops = hops
}

func intern(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}
