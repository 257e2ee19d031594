package collector

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// While the device is missing or lost, traces are skipped and counted as
// such, not charged to the destinations; device_up follows SetDevice.
func TestDeviceDownIsNotChargedToDestinations(t *testing.T) {
	f, eng := simAt(t, 1, 1, 2)
	lid, _ := f.LIDOf("H0-1", 0)

	fc := newFakeClock(time.Unix(1800000000, 0))
	e := New(log.NewNopLogger(), "seed")
	e.clock = fc
	defer e.Stop()
	var started atomic.Int64
	e.onTrace(func(string, time.Time) { started.Add(1) }, nil)
	e.SetDevice(nil, nil, errors.New("umad: no InfiniBand device"))
	e.Apply(mustConfig(t, fmt.Sprintf("interval: 1s\nvalidate: false\ndestinations:\n  - {name: a, lid: %d}\n", lid)))

	run := func(n int) { // n traces of the destination on the fake clock
		for i := 0; i < n; i++ {
			fc.WaitPending(t, 1, "between traces")
			fc.Advance()
		}
		fc.WaitPending(t, 1, "after the traces")
	}
	check := func(what string, up float64, traces uint64, skipped float64) {
		t.Helper()
		want := fmt.Sprintf(`
# HELP ibtracer_device_up 1 when the InfiniBand device (or simulator) is open.
# TYPE ibtracer_device_up gauge
ibtracer_device_up %v
# HELP ibtracer_traces_skipped_total Scheduled traces not run, by reason (device_down: no InfiniBand device open; device_error: the device failed during the trace). They count against no destination.
# TYPE ibtracer_traces_skipped_total counter
ibtracer_traces_skipped_total{reason="device_down"} %v
ibtracer_traces_skipped_total{reason="device_error"} 0
`, up, skipped)
		if err := testutil.CollectAndCompare(e, strings.NewReader(want), "ibtracer_device_up", "ibtracer_traces_skipped_total"); err != nil {
			t.Errorf("%s: %v", what, err)
		}
		if n := traceCount(e, "a"); n != traces {
			t.Errorf("%s: %d traces charged to the destination, want %d", what, n, traces)
		}
		s := e.dests.get("a")
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.failures != nil {
			for j, n := range s.failures {
				if n != 0 {
					t.Errorf("%s: %d failures (%s) charged to the destination", what, n, allReasons[j])
				}
			}
		}
	}
	run(3)
	check("before the device opens", 0, 0, float64(started.Load()))
	down := started.Load()

	e.SetDevice(eng, nil, nil)
	before := started.Load()
	run(2)
	check("device open", 1, uint64(started.Load()-before), float64(down))

	e.SetDevice(nil, nil, errors.New("umad: device lost"))
	ok := traceCount(e, "a")
	before = started.Load()
	run(2)
	check("device lost", 0, ok, float64(down+started.Load()-before))
}
