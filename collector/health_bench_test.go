package collector

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/ibtracer/ibtracer_exporter/agent"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestHealthCostAtScale measures what health: adds per interval for 1,000
// destinations on the 10,240-port simulated fabric (128 leaves, 64 spines,
// 80 hosts a leaf; agents everywhere): MADs, CPU and scrape size, health
// off and on, over two intervals each (the second is the steady state:
// fast path, shared reads). It asserts the budget: at most one PortInfo
// and one PortCounters per distinct link end per interval, plus, once per
// node, a PMA ClassPortInfo and a switch's port 0 PortInfo. Heavy: run it
// with IBTRACER_HEALTH_BENCH=1 (docs/metrics.md, "Link health").
func TestHealthCostAtScale(t *testing.T) {
	if os.Getenv("IBTRACER_HEALTH_BENCH") == "" {
		t.Skip("set IBTRACER_HEALTH_BENCH=1 to run the 10,240-port health benchmark")
	}
	topo, err := sim.FatTree2(128, 64, 80, 1)
	if err != nil {
		t.Fatal(err)
	}
	f, err := sim.New(topo, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var self string
	for _, n := range f.Nodes() {
		if !n.IsSwitch() && self == "" {
			self = n.Name
			continue
		}
		tr, _ := f.Attach(n.Name, 0)
		ae := ibmad.NewEngine(tr, ibmad.Options{})
		t.Cleanup(func() { ae.Close() })
		if _, err := agent.New(ae, agent.Config{RatePerSource: 1e6, Burst: 1e6}); err != nil {
			t.Fatal(err)
		}
	}
	lids := f.CALIDs()
	for _, health := range []bool{false, true} {
		var b strings.Builder
		b.WriteString("interval: 1h\nconcurrency: 32\n")
		if health {
			b.WriteString("health: {enabled: true, expect_width: 4x}\n")
		}
		b.WriteString("destinations:\n")
		n := 0
		self0, _ := f.LIDOf(self, 0)
		for i := 0; n < 1000; i += 7 { // spread over the leaves
			if lid := lids[i%len(lids)]; lid != self0 {
				fmt.Fprintf(&b, "  - {name: d%04d, lid: %d}\n", n, lid)
				n++
			}
		}
		tr, _ := f.Attach(self, 0)
		eng := ibmad.NewEngine(tr, ibmad.Options{})
		e := New(log.NewNopLogger(), "x")
		e.clock = newFakeClock(time.Unix(1_800_000_000, 0)) // the loops wait; traced by hand below
		e.SetDevice(eng, nil, nil)
		e.Apply(mustConfig(t, b.String()))
		dests := e.destinations()
		for interval := 1; interval <= 2; interval++ {
			if e.healthChecker() != nil {
				e.healthChecker().Forget() // an interval boundary: shared reads expire
			}
			traceMADs := func() (n uint64) {
				for _, s := range dests {
					s.mu.Lock()
					n += s.mads
					s.mu.Unlock()
				}
				return n
			}
			m0, h0, c0, w0 := traceMADs(), e.healthMADs(), cpuTime(), time.Now()
			var wg sync.WaitGroup
			sem := make(chan struct{}, 32)
			for _, s := range dests {
				wg.Add(1)
				sem <- struct{}{}
				go func() {
					defer func() { <-sem; wg.Done() }()
					e.traceOnce(context.Background(), s, time.Minute)
				}()
			}
			wg.Wait()
			cpu, wall := cpuTime()-c0, time.Since(w0)
			ok, ports, nodes := 0, map[string]bool{}, map[ibmad.GUID]bool{}
			for _, s := range dests {
				if r := s.last; r != nil && r.Status == "ok" {
					ok++
					for i := 1; i < len(r.Hops); i++ {
						ports[fmt.Sprintf("%s/%d", r.Hops[i-1].NodeGUID, r.Hops[i-1].OutPort)] = true
						ports[fmt.Sprintf("%s/%d", r.Hops[i].NodeGUID, r.Hops[i].InPort)] = true
						nodes[r.Hops[i-1].NodeGUID], nodes[r.Hops[i].NodeGUID] = true, true
					}
				}
			}
			hm := e.healthMADs() - h0
			rec := httptest.NewRecorder()
			MetricsHandler(NewRegistry(e), 0, log.NewNopLogger()).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
			series := 0
			for _, l := range strings.Split(rec.Body.String(), "\n") {
				if l != "" && !strings.HasPrefix(l, "#") {
					series++
				}
			}
			t.Logf("health %v, interval %d: %d/%d traces ok, trace MADs %d, health MADs %d, %d distinct link ends on %d nodes, "+
				"CPU %v in %v wall, scrape %d bytes, %d series",
				health, interval, ok, len(dests), traceMADs()-m0, hm, len(ports), len(nodes), cpu.Round(time.Millisecond),
				wall.Round(time.Millisecond), rec.Body.Len(), series)
			if ok != len(dests) {
				t.Fatalf("%d of %d traces ok", ok, len(dests))
			}
			budget := uint64(2 * len(ports))
			if interval == 1 {
				budget += uint64(2 * len(nodes))
			}
			if health && hm > budget {
				t.Errorf("health spent %d MADs in interval %d; the budget is %d", hm, interval, budget)
			}
			if !health && hm != 0 {
				t.Errorf("health off spent %d MADs", hm)
			}
		}
		e.Stop()
		eng.Close()
	}
}
