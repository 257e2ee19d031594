package collector

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// TestPathsAllSeries: on a sim with LMC 2, a paths: all destination gets
// its four LIDs traced, path_distinct_routes counts their distinct paths,
// hop series carry lid_offset (and only its), a change of one LID's path
// counts for that offset only, and a registry gathers the mixed families.
func TestPathsAllSeries(t *testing.T) {
	topo, err := sim.FatTree2(2, 2, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	f, err := sim.New(topo, sim.Options{LMC: 2})
	if err != nil {
		t.Fatal(err)
	}
	tp, _ := f.Attach("H0-0", 0)
	eng := ibmad.NewEngine(tp, ibmad.Options{})
	defer eng.Close()
	tr := trace.New(eng, trace.Options{Validate: trace.ValidateOff, Timeout: time.Second})
	lid, _ := f.LIDOf("H1-1", 0)
	e := New(log.NewNopLogger(), "seed")
	defer e.Stop()
	e.Apply(mustConfig(t, fmt.Sprintf(`
interval: 1h
destinations:
  - {name: multi, lid: %d, paths: all}
  - {name: single, lid: %d}
`, lid, lid)))
	ctx := context.Background()
	e.traceSet(ctx, ctx, tr, e.dests.get("multi"), nil)
	e.dests.get("single").record(tr.Trace(ctx, trace.Destination{LID: lid}))

	s := e.dests.get("multi")
	s.mu.Lock()
	ps := s.set
	s.mu.Unlock()
	if ps == nil || len(ps.Paths) != 4 {
		t.Fatalf("paths: all traced %v", ps)
	}
	hops := 0
	for _, r := range ps.Paths {
		hops += r.PathHops()
	}
	want := fmt.Sprintf(`
# HELP ibtracer_path_distinct_routes Distinct paths to the destination port in the last trace: with paths: all, among the LIDs of its LMC range; otherwise 1 when the last trace reached it, 0 when not.
# TYPE ibtracer_path_distinct_routes gauge
ibtracer_path_distinct_routes{dest="multi"} %d
ibtracer_path_distinct_routes{dest="single"} 1
# HELP ibtracer_traces_total Traces of all destinations together, by result.
# TYPE ibtracer_traces_total counter
ibtracer_traces_total{result="left_subnet"} 0
ibtracer_traces_total{result="mismatch"} 0
ibtracer_traces_total{result="ok"} 5
ibtracer_traces_total{result="resolve_failed"} 0
ibtracer_traces_total{result="too_long"} 0
ibtracer_traces_total{result="unreachable"} 0
`, ps.Distinct)
	if err := testutil.CollectAndCompare(e, strings.NewReader(want), "ibtracer_path_distinct_routes", "ibtracer_traces_total"); err != nil {
		t.Fatal(err)
	}
	if ps.Distinct < 2 {
		t.Fatalf("LMC 2 on a 2-spine fat tree: %d distinct paths, want several", ps.Distinct)
	}
	if n := testutil.CollectAndCount(e, "ibtracer_hop_info"); n != hops+ps.Paths[0].PathHops() {
		t.Fatalf("%d hop_info series, want %d (4 LIDs) + %d (single)", n, hops, ps.Paths[0].PathHops())
	}

	// LID offset 1's path moves (its second hop leaves by another port):
	// one change, counted for offset 1 only.
	moved := *ps.Paths[1]
	moved.Hops = append([]trace.Hop(nil), moved.Hops...)
	moved.Hops[1].OutPort += 10
	ps2 := &trace.PathSet{Destination: ps.Destination, BaseLID: ps.BaseLID, LMC: ps.LMC,
		Paths: []*trace.Result{ps.Paths[0], &moved, ps.Paths[2], ps.Paths[3]}}
	ps2.Summarise()
	s.recordSet(ps2)
	wantChanges := `
# HELP ibtracer_path_changes_total Times the traced path (nodes and ports) changed.
# TYPE ibtracer_path_changes_total counter
ibtracer_path_changes_total{dest="multi",lid_offset="0"} 0
ibtracer_path_changes_total{dest="multi",lid_offset="1"} 1
ibtracer_path_changes_total{dest="multi",lid_offset="2"} 0
ibtracer_path_changes_total{dest="multi",lid_offset="3"} 0
ibtracer_path_changes_total{dest="single"} 0
`
	if err := testutil.CollectAndCompare(e, strings.NewReader(wantChanges), "ibtracer_path_changes_total"); err != nil {
		t.Fatal(err)
	}
	// Offset 1 goes back to its first path: a return, of offset 1 only
	// (the series only for the offsets that changed).
	s.recordSet(ps)
	wantReturns := `
# HELP ibtracer_path_returns_total ` + helpReturns + `
# TYPE ibtracer_path_returns_total counter
ibtracer_path_returns_total{dest="multi",lid_offset="1"} 1
`
	if err := testutil.CollectAndCompare(e, strings.NewReader(wantReturns), "ibtracer_path_returns_total"); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(e); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather with and without lid_offset: %v", err)
	}
	offsets := map[string]bool{}
	for _, mf := range mfs {
		if mf.GetName() != "ibtracer_hop_info" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "lid_offset" {
					offsets[l.GetValue()] = true
				}
			}
		}
	}
	if len(offsets) != 4 {
		t.Fatalf("hop_info lid_offset values %v, want 0..3", offsets)
	}
	if problems, err := testutil.CollectAndLint(e); err != nil || len(problems) != 0 {
		t.Fatalf("lint: %v %v", err, problems)
	}
}
