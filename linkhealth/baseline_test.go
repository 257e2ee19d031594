package linkhealth

import (
	"context"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// TestStaleBaselineIsNoBaseline: with MaxWindow, a port's previous
// reading older than it is no baseline: 100 symbol errors from before 20
// minutes in which the checker did not read the port are not the link's
// errors now (the reading is first, the link healthy), and the next
// reading has its baseline again. Within MaxWindow, and without it at
// any age, the increments count. Found by the fleet evaluation at 1,000
// exporters (test/localize): exporters whose sample rotated onto a path
// blamed a link whose drops had stopped 20 minutes before, in a fault-free
// trial.
func TestStaleBaselineIsNoBaseline(t *testing.T) {
	for _, tc := range []struct {
		maxWindow time.Duration
		stale     bool // the 20-minute-old baseline is none
	}{{3 * time.Minute, true}, {0, false}} {
		s, _, hc, r, clk := healthSetup(t, Options{Counters: true, MaxWindow: tc.maxWindow})
		ctx := context.Background()
		hc.Check(ctx, r)
		clk.Add(2 * time.Minute)
		addErrors(t, s, r, 1, "b", sim.PortErrors{SymbolErrors: 100})
		if l := hc.Check(ctx, r).Links[1]; l.Healthy || l.BERState != BERAboveTarget || l.Errors != 100 {
			t.Fatalf("max window %v: 100 errors over 2 minutes: healthy %v, BER %q, errors %d", tc.maxWindow, l.Healthy, l.BERState, l.Errors)
		}
		clk.Add(time.Minute)
		addErrors(t, s, r, 1, "b", sim.PortErrors{SymbolErrors: 100})
		clk.Add(20 * time.Minute)
		l := hc.Check(ctx, r).Links[1]
		if tc.stale && (!l.Healthy || l.B.Counters.State != CountersFirst || l.Errors != 0 || l.ErrorsKnown) {
			t.Fatalf("max window %v: a baseline 21 minutes old: healthy %v, counters %q, errors %d (known %v), BER %q; want healthy, first, none",
				tc.maxWindow, l.Healthy, l.B.Counters.State, l.Errors, l.ErrorsKnown, l.BERState)
		}
		if !tc.stale && (l.Healthy || l.Errors != 100 || l.BERState != BERAboveTarget) {
			t.Fatalf("max window %v: a baseline 21 minutes old: healthy %v, errors %d, BER %q; want the 100 errors above target",
				tc.maxWindow, l.Healthy, l.Errors, l.BERState)
		}
		clk.Add(time.Minute)
		addErrors(t, s, r, 1, "b", sim.PortErrors{SymbolErrors: 100})
		if l := hc.Check(ctx, r).Links[1]; l.Healthy || l.Errors != 100 || l.B.Counters.State != CountersOK {
			t.Fatalf("max window %v: the next minute's 100 errors: healthy %v, errors %d, counters %q", tc.maxWindow, l.Healthy, l.Errors, l.B.Counters.State)
		}
	}
}
