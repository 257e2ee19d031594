package linkhealth

import (
	"context"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// TestReadingAt: a counter reading's At is when it was read, on the
// tracer's clock, for a reading that failed too (the spine's PMA answers
// for another attribute); a reading shared within Options.Share keeps
// its time, and the next one, after Share, has the later time. The
// exporter orders the readings it logs by it (collector/health_log.go).
func TestReadingAt(t *testing.T) {
	s, _, _, r, clk := healthSetup(t, Options{})
	hc := NewChecker(s.tr, Options{Counters: true, Share: time.Minute})
	spine := s.f.NodeByGUID(r.Hops[2].NodeGUID)
	if err := s.f.SetPMAMisanswer(spine.Name, &sim.PMAMisanswer{Attrs: map[ibmad.AttrID]ibmad.AttrID{
		ibmad.AttrPortCountersExtended: ibmad.AttrPortCounters, ibmad.AttrPortCounters: ibmad.AttrPortCountersExtended}}); err != nil {
		t.Fatal(err)
	}
	check := func(want time.Time) {
		t.Helper()
		ph := hc.Check(context.Background(), r)
		unavailable := 0
		for _, l := range ph.Links {
			for _, e := range []*LinkEnd{&l.A, &l.B} {
				if got := e.Counters.At(); !got.Equal(want) {
					t.Fatalf("hop %d, %s port %d (%s): read at %v, want %v", l.Hop, e.GUID, e.Port, e.Counters.State, got, want)
				}
				if e.Counters.State == CountersUnavailable {
					unavailable++
				}
			}
		}
		if unavailable == 0 {
			t.Fatal("no reading failed: the test proves nothing for failed readings")
		}
	}
	t0 := clk.Now()
	check(t0)
	clk.Add(30 * time.Second)
	check(t0) // shared
	clk.Add(31 * time.Second)
	check(clk.Now())
}
