package collector

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// traceCount returns how many traces of a destination were recorded.
func traceCount(e *Exporter, name string) uint64 {
	s := e.dests.get(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.traces
}

// Changing concurrency on reload while traces are in flight: every
// destination keeps tracing and Stop returns.
func TestReloadConcurrencyWhileTracing(t *testing.T) {
	topo, _ := sim.FatTree2(2, 1, 2, 1)
	f, _ := sim.New(topo, sim.Options{})
	_ = f.SetSilent("H1-1", true) // its traces run until they time out
	tr, err := f.Attach("H0-0", 0)
	if err != nil {
		t.Fatal(err)
	}
	eng := ibmad.NewEngine(tr, ibmad.Options{})
	defer eng.Close()
	lid := func(n string) uint16 { v, _ := f.LIDOf(n, 0); return v }
	cfg := func(concurrency int) string {
		return fmt.Sprintf(`
interval: 3s
timeout: 1s
retries: 1
validate: false
concurrency: %d
destinations:
  - {name: a, lid: %d}
  - {name: b, lid: %d}
  - {name: dead, lid: %d}
`, concurrency, lid("H0-1"), lid("H1-0"), lid("H1-1"))
	}
	e := New(log.NewNopLogger(), "seed")
	stopped := false
	defer func() {
		if !stopped {
			go e.Stop()
		}
	}()
	deadStarted := make(chan struct{})
	var once sync.Once
	e.onTrace(func(name string, _ time.Time) {
		if name == "dead" {
			once.Do(func() { close(deadStarted) })
		}
	}, nil)
	e.SetDevice(eng, nil, nil)
	e.Apply(mustConfig(t, cfg(2)))
	select {
	case <-deadStarted:
	case <-time.After(30 * time.Second):
		t.Fatal("the dead destination was never traced")
	}
	// The dead destination's trace holds a slot of the old semaphore for
	// about 2 s (two 1 s attempts): reload now.
	e.Apply(mustConfig(t, cfg(3)))
	a0, b0, d0 := traceCount(e, "a"), traceCount(e, "b"), traceCount(e, "dead")
	deadline := time.Now().Add(30 * time.Second)
	for traceCount(e, "a") < a0+3 || traceCount(e, "b") < b0+3 || traceCount(e, "dead") < d0+2 {
		if time.Now().After(deadline) {
			t.Fatalf("after the reload: a traced %d more times, b %d, dead %d in 30 s at a 3 s interval",
				traceCount(e, "a")-a0, traceCount(e, "b")-b0, traceCount(e, "dead")-d0)
		}
		time.Sleep(20 * time.Millisecond)
	}
	done := make(chan struct{})
	go func() { e.Stop(); close(done) }()
	select {
	case <-done:
		stopped = true
	case <-time.After(30 * time.Second):
		t.Fatal("Stop did not return within 30 s")
	}
}
