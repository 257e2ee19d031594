package collector

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// armed counts the destinations whose next run is armed.
func armed(e *Exporter) int {
	dests := e.dests.sorted()
	e.sched.mu.Lock()
	defer e.sched.mu.Unlock()
	n := 0
	for _, s := range dests {
		if s.sch.stopT != nil && !s.sch.waiting {
			n++
		}
	}
	return n
}

// The schedule of many destinations costs no goroutine per destination
// (at 10,000 destinations their stacks took about 100 MB): a timer each,
// and workers only while traces run.
func TestSchedulerKeepsNoGoroutinePerDestination(t *testing.T) {
	const n = 2000
	var b strings.Builder
	b.WriteString("interval: 1h\ndestinations:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  - {name: d%d, lid: %d}\n", i, i+1)
	}
	c, err := configParse(b.String())
	if err != nil {
		t.Fatal(err)
	}
	base := runtime.NumGoroutine()
	e := New(log.NewNopLogger(), "seed") // no device: a due trace is skipped at once
	defer e.Stop()
	e.Apply(c)
	deadline := time.Now().Add(60 * time.Second)
	for armed(e) < n-100 { // the first runs spread over 40 s: a few may be running
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d destinations armed after 60 s", armed(e), n)
		}
		time.Sleep(time.Millisecond)
	}
	if g := runtime.NumGoroutine() - base; g > 50 {
		t.Fatalf("%d goroutines for %d destinations", g, n)
	}
}

// At most `concurrency` traces run at once, whatever the number of due
// destinations, and every destination is traced.
func TestSchedulerBoundsConcurrency(t *testing.T) {
	topo, _ := sim.FatTree2(2, 1, 2, 1)
	f, _ := sim.New(topo, sim.Options{})
	_ = f.SetSilent("H1-1", true) // its traces run until they time out: 2 s, longer than the 2 s spread of the first runs, so all six are due at once
	tr, err := f.Attach("H0-0", 0)
	if err != nil {
		t.Fatal(err)
	}
	eng := ibmad.NewEngine(tr, ibmad.Options{})
	defer eng.Close()
	lid, _ := f.LIDOf("H1-1", 0)
	var b strings.Builder
	b.WriteString("interval: 1h\ntimeout: 1s\nretries: 1\nvalidate: false\nconcurrency: 2\ndestinations:\n")
	const n = 6
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  - {name: d%d, lid: %d}\n", i, lid)
	}
	var (
		mu             sync.Mutex
		now, most, ran int
	)
	e := New(log.NewNopLogger(), "seed")
	defer e.Stop()
	e.onTrace(func(string, time.Time) {
		mu.Lock()
		now++
		most = max(most, now)
		mu.Unlock()
	}, nil)
	e.onTrace(nil, func(string) {
		mu.Lock()
		now--
		ran++
		mu.Unlock()
	})
	e.SetDevice(eng, nil, nil)
	e.Apply(mustConfig(t, b.String()))
	deadline := time.Now().Add(60 * time.Second)
	for {
		mu.Lock()
		r, m := ran, most
		mu.Unlock()
		if r >= n {
			if m != 2 {
				t.Fatalf("%d traces ran at once, want 2 (concurrency)", m)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d destinations traced after 60 s", r, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
