package collector

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/collector/config"
)

// A fleet that starts at once (a reboot of every node) must not walk
// its cold paths together (docs/architecture.md, "Load on one switch"):
// the first traces of the destinations discovered at the start spread
// over traceStartSpread after their discovery, each at its phase, and a
// destination discovered after that window starts at its phase.
func TestFirstTracesSpreadOverStartWindow(t *testing.T) {
	start := time.Unix(1800000000, 0)
	var c clock = newStepClock(start)
	q := newScheduler(context.Background(), &c, nil)
	q.markStart()
	const n = 2000
	interval := time.Minute
	var firsts []time.Duration
	for i := 0; i < n; i++ {
		s := newDestState(config.Destination{Name: fmt.Sprintf("lid-%d", i+1), Interval: config.Duration(interval)}, nil, nil)
		s.atPhase = true
		d := q.firstRun(s, fmt.Sprintf("0x%016x", 0x1000+i/8), n)
		if d < 0 || d > traceStartSpread+interval {
			t.Fatalf("%s: first trace %s after the start, want within %s", s.cfg.Name, d, traceStartSpread+interval)
		}
		// At its phase: the next ones follow at the interval.
		if ph := phase(fmt.Sprintf("0x%016x", 0x1000+i/8), s.cfg.Name, interval); start.Add(d).Sub(start.Truncate(interval))%interval != ph {
			t.Fatalf("%s: first trace at %s, not at its phase %s", s.cfg.Name, d, ph)
		}
		firsts = append(firsts, d)
	}
	// No minute holds much more than its share of the window.
	perMinute := map[int]int{}
	for _, d := range firsts {
		perMinute[int(d/time.Minute)]++
	}
	share := float64(n) * float64(time.Minute) / float64(traceStartSpread)
	for m, k := range perMinute {
		if float64(k) > 1.3*share {
			t.Errorf("minute %d after the start: %d first traces of %d, want at most %.0f (spread over %s)", m, k, n, 1.3*share, traceStartSpread)
		}
	}
	// A short interval spreads them over 8 intervals, not minutes.
	short := newDestState(config.Destination{Name: "short", Interval: config.Duration(5 * time.Second)}, nil, nil)
	short.atPhase = true
	if d := q.firstRun(short, "0x1", n); d < 0 || d > 9*5*time.Second {
		t.Errorf("interval 5s: first trace in %s, want within 45s", d)
	}
	// Discovered after the window: at its next phase, within an interval.
	c.(*stepClock).Add(traceStartSpread + time.Second)
	s := newDestState(config.Destination{Name: "late", Interval: config.Duration(interval)}, nil, nil)
	s.atPhase = true
	if d := q.firstRun(s, "0x1", n); d <= 0 || d > interval {
		t.Errorf("discovered after the start window: first trace in %s, want within %s", d, interval)
	}
}
