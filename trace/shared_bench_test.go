package trace

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// BenchmarkConcurrentTracesShareFlights traces every CA of a fat tree (8
// leaves, 4 spines, 16 hosts each) from H0-0, 32 at a time, as `ibtracer
// --all` and one interval of the exporter do, with facts and verdicts
// shared for the run and 20 µs per link, and reports the MADs sent per
// run: what one flight per question (shared.go) saves is the questions
// asked while another trace's same question is in flight
// (docs/architecture.md, "Facts shared by a run").
func BenchmarkConcurrentTracesShareFlights(b *testing.B) {
	topo, err := sim.FatTree2(8, 4, 16, 1)
	if err != nil {
		b.Fatal(err)
	}
	s := newSim(b, topo, sim.Options{HopLatency: 20 * time.Microsecond})
	s.agentsEverywhere()
	lids := s.f.CALIDs()
	var mads int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tr := s.tracer("H0-0", Options{ShareFacts: time.Minute, ShareValidation: time.Minute, NoFastPath: true})
		work := make(chan uint16)
		var wg sync.WaitGroup
		var mu sync.Mutex
		for w := 0; w < 32; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for lid := range work {
					r := tr.Trace(context.Background(), Destination{LID: lid})
					if r.Status != StatusOK {
						b.Errorf("lid %d: %s %v", lid, r.Status, r.Err)
					}
					mu.Lock()
					mads += r.MADs
					mu.Unlock()
				}
			}()
		}
		for _, lid := range lids {
			work <- lid
		}
		close(work)
		wg.Wait()
	}
	b.ReportMetric(float64(mads)/float64(b.N), "MADs/run")
}
