package trace

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// PathSet is every path to one destination port: with LMC > 0 a port
// owns 2^LMC LIDs, which the SM may route over different paths
// (docs/architecture.md, "All the paths of a destination").
type PathSet struct {
	Destination Destination
	// BaseLID and LMC of the destination port, from the PortInfo the walk
	// read at the last hop; LMC 0 when the first trace did not reach it.
	BaseLID uint16
	LMC     uint8
	// Paths holds one trace per LID offset: Paths[i] traced BaseLID+i.
	// When the first trace did not reach the destination it is the only
	// one.
	Paths []*Result
	// Distinct counts the different paths (Result.Signature) among the
	// traces that reached the destination.
	Distinct int
	// Shared lists the hops (by node) every reaching path crosses, in the
	// order of the first path, the source excluded.
	Shared []Hop
}

// lmcConcurrency bounds the traces of one path set that run at once.
const lmcConcurrency = 8

// TraceAll traces every LID of d's port: d first (as Trace does), which
// tells the port's base LID and LMC, then every other LID of the range.
// Each offset is an ordinary trace with its own cached path.
func (t *Tracer) TraceAll(ctx context.Context, d Destination) *PathSet {
	return t.TraceAllAfter(ctx, d, nil)
}

// TraceAllAfter is TraceAll with d's first trace already made (first,
// Trace's result for d; nil: traced here), as `ibtracer --all` has made
// it while listing the CA ports.
func (t *Tracer) TraceAllAfter(ctx context.Context, d Destination, first *Result) *PathSet {
	if first == nil {
		first = t.Trace(ctx, d)
	}
	ps := &PathSet{Destination: d, BaseLID: first.DLID, Paths: []*Result{first}}
	last, ok := reached(first)
	if !ok {
		ps.Summarise()
		return ps
	}
	lmc := last.LMC & 7
	base := last.LID
	if !owns(last, first.DLID) { // never: reached says so; keep the set consistent anyway
		ps.Summarise()
		return ps
	}
	ps.BaseLID, ps.LMC = base, lmc
	n := 1 << lmc
	ps.Paths = make([]*Result, n)
	ps.Paths[first.DLID-base] = first
	sem := make(chan struct{}, lmcConcurrency)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		if ps.Paths[i] != nil {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			od := Destination{Name: d.Name, LID: base + uint16(i)} // the set's name, if it has one
			ps.Paths[i] = t.Trace(ctx, od)
		}(i)
	}
	wg.Wait()
	ps.Summarise()
	return ps
}

// reached returns the last hop of a trace that got to its destination.
func reached(r *Result) (*Hop, bool) {
	if !r.Status.Walked() || len(r.Hops) == 0 { // left_subnet: the router port it reached
		return nil, false
	}
	h := &r.Hops[len(r.Hops)-1]
	return h, owns(h, r.DLID)
}

// Summarise fills Distinct and Shared from Paths (again, after a caller
// named the hops).
func (ps *PathSet) Summarise() {
	sigs := map[string]bool{}
	var on map[ibmad.GUID]int
	var order []Hop
	n := 0
	for _, r := range ps.Paths {
		if _, ok := reached(r); !ok {
			continue
		}
		n++
		sigs[r.Signature()] = true
		if order == nil {
			on = map[ibmad.GUID]int{}
			order = append([]Hop(nil), r.Hops[1:]...)
		}
		seen := map[ibmad.GUID]bool{}
		for _, h := range r.Hops[1:] {
			if !seen[h.NodeGUID] {
				seen[h.NodeGUID] = true
				on[h.NodeGUID]++
			}
		}
	}
	ps.Distinct = len(sigs)
	ps.Shared = nil
	for _, h := range order {
		if on[h.NodeGUID] == n {
			ps.Shared = append(ps.Shared, h)
		}
	}
}

// Offset returns the LID offset of path i's DLID within the port's range.
func (ps *PathSet) Offset(i int) int {
	if r := ps.Paths[i]; r.DLID >= ps.BaseLID {
		return int(r.DLID - ps.BaseLID)
	}
	return i
}

// Worst returns the path set's worst outcome (Status.Worse); of equally
// bad paths, the first.
func (ps *PathSet) Worst() *Result {
	w := ps.Paths[0]
	for _, r := range ps.Paths[1:] {
		if r.Status.Worse(w.Status) {
			w = r
		}
	}
	return w
}

// MADs sums the MADs of every path's trace.
func (ps *PathSet) MADs() int {
	n := 0
	for _, r := range ps.Paths {
		n += r.MADs
	}
	return n
}

// Summary is the text form: one line for the set, then one per path.
func (ps *PathSet) Summary() string {
	var b strings.Builder
	ok := 0
	for _, r := range ps.Paths {
		if _, reach := reached(r); reach {
			ok++
		}
	}
	fmt.Fprintf(&b, "%s: lid %d-%d (LMC %d): %d path(s) traced, %d reached, %d distinct, %d shared hop(s)",
		ps.Destination.Address(), ps.BaseLID, uint32(ps.BaseLID)+uint32(1)<<ps.LMC-1, ps.LMC, len(ps.Paths), ok, ps.Distinct, len(ps.Shared))
	if len(ps.Shared) > 0 {
		names := make([]string, len(ps.Shared))
		for i := range ps.Shared {
			names[i] = ps.Shared[i].shownName()
			if names[i] == "" {
				names[i] = ps.Shared[i].NodeGUID.String()
			}
		}
		fmt.Fprintf(&b, " [%s]", strings.Join(names, ", "))
	}
	for i, r := range ps.Paths {
		fmt.Fprintf(&b, "\n  +%d %s", ps.Offset(i), r.Summary())
	}
	return b.String()
}

// WriteVerbose writes the set's summary line and every path hop by hop.
func (ps *PathSet) WriteVerbose(w io.Writer) {
	first, _, _ := strings.Cut(ps.Summary(), "\n")
	fmt.Fprintln(w, first)
	for i, r := range ps.Paths {
		fmt.Fprintf(w, "\nlid offset %d:\n", ps.Offset(i))
		r.WriteVerbose(w)
	}
}

// JSONPathSet is a path set in the JSON report.
type JSONPathSet struct {
	Destination string       `json:"destination"`
	Address     string       `json:"address"`
	BaseLID     uint16       `json:"base_lid"`
	LMC         uint8        `json:"lmc"`
	Distinct    int          `json:"distinct_paths"`
	Shared      []JSONShared `json:"shared_hops"`
	MADs        int          `json:"mads"`
	Paths       []JSONResult `json:"paths"`
}

// JSONShared names a hop every path crosses.
type JSONShared struct {
	NodeGUID string `json:"node_guid"`
	NodeDesc string `json:"node_desc"`
	NodeName string `json:"node_name,omitempty"`
	LID      uint16 `json:"lid"`
}

// JSON returns the report form of ps.
func (ps *PathSet) JSON() JSONPathSet {
	j := JSONPathSet{Destination: ps.Destination.String(), Address: ps.Destination.Address(), BaseLID: ps.BaseLID, LMC: ps.LMC,
		Distinct: ps.Distinct, Shared: []JSONShared{}, MADs: ps.MADs()}
	for _, h := range ps.Shared {
		j.Shared = append(j.Shared, JSONShared{NodeGUID: h.NodeGUID.String(), NodeDesc: h.NodeDesc, NodeName: h.NodeName, LID: h.LID})
	}
	for _, r := range ps.Paths {
		j.Paths = append(j.Paths, r.JSON())
	}
	return j
}

// Duration is the wall time of the set, from the first trace's start to
// the last trace's end.
func (ps *PathSet) Duration() time.Duration {
	var start, end time.Time
	for _, r := range ps.Paths {
		if start.IsZero() || r.Start.Before(start) {
			start = r.Start
		}
		if e := r.Start.Add(r.Duration); e.After(end) {
			end = e
		}
	}
	return end.Sub(start)
}
