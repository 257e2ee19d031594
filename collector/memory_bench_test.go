package collector

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/ibtracer/ibtracer_exporter/agent"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// stillClock never fires: the benchmark traces by hand, and the
// scheduler's timers cost what the real clock's cost (no goroutine).
type stillClock struct{ now time.Time }

func (c stillClock) Now() time.Time { return c.now }
func (c stillClock) Timer(time.Duration) (<-chan time.Time, func()) {
	return nil, func() {}
}
func (c stillClock) AfterFunc(_ time.Duration, f func()) func() {
	return func() {}
}

// inuse is the memory the runtime holds for objects and stacks, after a
// collection.
func inuse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse
}

// BenchmarkDestinationMemory: the memory an exporter holds per
// destination at fleet scale (10,000 destinations, hops: false, on the
// 10,240-port fat tree of scripts/bench-exporter.sh), after each has been
// traced once: heap and stacks in use, less the simulated fabric's
// (bytes/destination: the growth since before the exporter;
// exporter-bytes/destination: what releasing the exporter frees).
//
//	go test -run '^$' -bench DestinationMemory -benchtime 1x ./collector
func BenchmarkDestinationMemory(b *testing.B) {
	const n = 10000
	topo, err := sim.FatTree2(128, 64, 80, 1)
	if err != nil {
		b.Fatal(err)
	}
	f, err := sim.New(topo, sim.Options{})
	if err != nil {
		b.Fatal(err)
	}
	var hosts []string
	for _, nd := range f.Nodes() {
		if !nd.IsSwitch() {
			hosts = append(hosts, nd.Name)
		}
	}
	tr, err := f.Attach(hosts[0], 0)
	if err != nil {
		b.Fatal(err)
	}
	eng := ibmad.NewEngine(tr, ibmad.Options{})
	defer eng.Close()
	for _, h := range hosts[1:] { // agents everywhere, as the bench script's --sim.agents=all
		t, err := f.Attach(h, 0)
		if err != nil {
			b.Fatal(err)
		}
		ae := ibmad.NewEngine(t, ibmad.Options{})
		defer ae.Close()
		if _, err := agent.New(ae, agent.Config{RatePerSource: 1e6}); err != nil {
			b.Fatal(err)
		}
	}
	var cfg strings.Builder
	cfg.WriteString("interval: 60s\ntimeout: 500ms\nretries: 1\nconcurrency: 32\ndestinations:\n")
	for i := 0; i < n; i++ {
		lid, err := f.LIDOf(hosts[1+i%(len(hosts)-1)], 0)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(&cfg, "  - {name: d%d, lid: %d, hops: false}\n", i, lid)
	}
	c, err := configParse(cfg.String())
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		before := inuse()
		e := New(log.NewNopLogger(), "seed")
		e.clock = stillClock{now: time.Unix(1800000000, 0)}
		e.SetDevice(eng, nil, nil)
		e.Apply(c)
		dests := e.destinations()
		var wg sync.WaitGroup
		work := make(chan *destState)
		for w := 0; w < 32; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for s := range work {
					e.traceOnce(context.Background(), s, time.Minute)
				}
			}()
		}
		for _, s := range dests {
			work <- s
		}
		close(work)
		wg.Wait()
		ok := 0
		for _, s := range dests {
			s.mu.Lock()
			if s.last != nil && s.last.Status == "ok" {
				ok++
			}
			s.mu.Unlock()
		}
		if ok != n {
			b.Fatalf("%d of %d traces ok", ok, n)
		}
		dests = nil
		after := inuse()
		b.ReportMetric(float64(after-before)/n, "bytes/destination")
		if p := os.Getenv("IBTRACER_HEAP_PROFILE"); p != "" { // where the bytes are: go tool pprof -sample_index=inuse_space
			if f, err := os.Create(p); err == nil {
				_ = pprof.WriteHeapProfile(f)
				f.Close()
			}
		}
		e.Stop()
		e = nil
		// What the exporter itself held: what its release frees (the
		// rest of the growth is the simulated fabric's and engine's).
		b.ReportMetric(float64(after-inuse())/n, "exporter-bytes/destination")
	}
}
