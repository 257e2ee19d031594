package trace

import (
	"context"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// BenchmarkRepeatTrace traces every CA of a 2-level fat tree (agents on
// every node) again and again from one host: the steady state of the
// exporter. It reports MADs per trace and per hop, against ibtracert's
// 5N+15 for N switch hops.
func BenchmarkRepeatTrace(b *testing.B) { benchRepeat(b, Options{}) }

// BenchmarkRepeatTraceShared is BenchmarkRepeatTrace with hop verdicts and
// LFT blocks shared across destinations for 10 s, as the exporter runs.
func BenchmarkRepeatTraceShared(b *testing.B) {
	benchRepeat(b, Options{ShareValidation: 10 * time.Second})
}

func benchRepeat(b *testing.B, o Options) {
	topo, _ := sim.FatTree2(8, 4, 4, 2)
	f, _ := sim.New(topo, sim.Options{})
	s := &simFabric{f: f, t: b, agents: map[string]*ibmad.Engine{}, rate: 1e9}
	s.agentsEverywhere()
	tr := s.tracer("H0-0", o)
	lids := f.CALIDs()
	ctx := context.Background()
	for _, lid := range lids { // warm up: the first, walking, traces
		tr.Trace(ctx, Destination{LID: lid})
	}
	var mads, hops, ibtracert, fast int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := tr.Trace(ctx, Destination{LID: lids[i%len(lids)]})
		if r.Status != StatusOK {
			b.Fatal(r.Err)
		}
		mads += r.MADs
		hops += r.PathHops()
		if n := r.PathHops(); n > 0 {
			ibtracert += 5*(n-1) + 15
		}
		if r.FastPath {
			fast++
		}
	}
	b.ReportMetric(float64(mads)/float64(b.N), "MADs/trace")
	b.ReportMetric(float64(mads)/float64(hops), "MADs/hop")
	b.ReportMetric(float64(ibtracert)/float64(b.N), "ibtracert-MADs/trace")
	b.ReportMetric(float64(fast)/float64(b.N), "fast-path-ratio")
}

// BenchmarkFirstTrace is a cold trace (no caches): walk and validation.
func BenchmarkFirstTrace(b *testing.B) {
	topo, _ := sim.FatTree2(8, 4, 4, 2)
	f, _ := sim.New(topo, sim.Options{})
	s := &simFabric{f: f, t: b, agents: map[string]*ibmad.Engine{}, rate: 1e9}
	s.agentsEverywhere()
	lids := f.CALIDs()
	var mads, hops int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tr := s.tracer("H0-0", Options{})
		r := tr.Trace(context.Background(), Destination{LID: lids[len(lids)-1-i%8]})
		if r.Status != StatusOK {
			b.Fatal(r.Err)
		}
		mads += r.MADs
		hops += r.PathHops()
	}
	b.ReportMetric(float64(mads)/float64(b.N), "MADs/trace")
	b.ReportMetric(float64(mads)/float64(hops), "MADs/hop")
}
