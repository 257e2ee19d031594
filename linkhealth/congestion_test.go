package linkhealth

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/trace"
)

// ticksFor is the PortXmitWait rate that makes a 4X QDR link (the sim's)
// wait share of the time with the default tick: 8 symbol times of 1 ns.
func ticksFor(share float64) float64 { return share / (8 * 1e-9) }

// congest makes the egress port of hop i of r wait share of the time on
// VL vl, and returns the link's index in the path health.
func congest(t *testing.T, s *fixture, r *trace.Result, i, vl int, share float64) int {
	t.Helper()
	n := s.f.NodeByGUID(r.Hops[i].NodeGUID)
	if err := s.f.SetVLXmitWaitRate(n.Name, int(r.Hops[i].OutPort), vl, ticksFor(share), s.clk.Now); err != nil {
		t.Fatal(err)
	}
	return i // link i joins hop i (its a end) to hop i+1
}

func TestCongestedLink(t *testing.T) {
	s, _, hc, r, clk := healthSetup(t, Options{Counters: true, XmitWaitLimit: 0.05})
	li := congest(t, s, r, 1, 5, 0.2)
	other := congest(t, s, r, 2, 0, 0.01) // below the limit
	hc.Check(context.Background(), r)     // the first reading
	clk.Add(10 * time.Second)
	ph := hc.Check(context.Background(), r)
	l := ph.Links[li]
	if l.Verdict != LinkCongested || !l.Congested || !l.Healthy || !l.XmitWaitKnown || math.Abs(l.XmitWaitRatio-0.2) > 1e-6 {
		t.Fatalf("congested link: verdict %s congested %v healthy %v ratio %g", l.Verdict, l.Congested, l.Healthy, l.XmitWaitRatio)
	}
	if l.XmitWaitEnd != "a" || l.XmitWaitVL == nil || *l.XmitWaitVL != 5 {
		t.Fatalf("waiting end %q VL %v, want a and VL 5", l.XmitWaitEnd, l.XmitWaitVL)
	}
	if vr := l.A.Counters.VLXmitWait; vr == nil || vr.Err != "" || len(vr.Saturated) != 1 || vr.Saturated[0] != 5 {
		t.Fatalf("a's VL reading %+v, want VL5 saturated (16 bits)", vr)
	}
	if l.B.Counters.VLXmitWait != nil {
		t.Fatalf("b did not wait, yet its VLs were read: %+v", l.B.Counters.VLXmitWait)
	}
	o := ph.Links[other]
	if o.Verdict != LinkOK || o.Congested || math.Abs(o.XmitWaitRatio-0.01) > 1e-6 || *o.XmitWaitVL != 0 {
		t.Fatalf("link below the limit: %s %v ratio %g", o.Verdict, o.Congested, o.XmitWaitRatio)
	}
	if ph.CongestedLinks != 1 || ph.DegradedLinks != 0 || !ph.Healthy || ph.XmitWaitHop != l.Hop || ph.XmitWaitRatio != l.XmitWaitRatio {
		t.Fatalf("path: congested %d degraded %d healthy %v most congested hop %d ratio %g", ph.CongestedLinks,
			ph.DegradedLinks, ph.Healthy, ph.XmitWaitHop, ph.XmitWaitRatio)
	}
	for i, q := range ph.Links {
		if i != li && i != other && (q.XmitWaitRatio != 0 || q.Verdict != LinkOK || q.XmitWaitEnd != "") {
			t.Fatalf("link %d: ratio %g verdict %s end %q", i, q.XmitWaitRatio, q.Verdict, q.XmitWaitEnd)
		}
	}
}

// TestDegradationOutranksCongestion: a congested link trained at 1X is
// width_degraded, and still counted congested.
func TestDegradationOutranksCongestion(t *testing.T) {
	s, _, hc, r, clk := healthSetup(t, Options{Counters: true, XmitWaitLimit: 0.05})
	li := congest(t, s, r, 1, 5, 0.2)
	hc.Check(context.Background(), r)
	a := s.f.NodeByGUID(r.Hops[1].NodeGUID)
	if err := s.f.SetLinkWidth(a.Name, int(r.Hops[1].OutPort), true); err != nil {
		t.Fatal(err)
	}
	clk.Add(10 * time.Second)
	ph := hc.Check(context.Background(), r)
	l := ph.Links[li]
	// 1X QDR: a symbol is still 1 ns a lane, so the share is unchanged.
	if l.Verdict != LinkWidthDegraded || !l.Congested || ph.CongestedLinks != 1 || ph.DegradedLinks != 1 || math.Abs(l.XmitWaitRatio-0.2) > 1e-6 {
		t.Fatalf("degraded and congested: %s %v (path: %d congested, %d degraded), ratio %g", l.Verdict, l.Congested,
			ph.CongestedLinks, ph.DegradedLinks, l.XmitWaitRatio)
	}
}

// TestCongestionWithoutLimit: the ratio and the waiting VL are reported,
// no verdict; the VL increments follow from the second VL reading on.
func TestCongestionWithoutLimit(t *testing.T) {
	s, _, hc, r, clk := healthSetup(t, Options{Counters: true, XmitWaitTickSymbols: 4})
	li := congest(t, s, r, 0, 2, 0.001) // 1e-3 of 8 ns ticks: 1.25e5 a second
	hc.Check(context.Background(), r)
	clk.Add(100 * time.Millisecond) // 12500 ticks: under the 16-bit maximum
	ph := hc.Check(context.Background(), r)
	l := ph.Links[li]
	// With 4-symbol ticks the same ticks are half the time.
	if l.Verdict != LinkOK || l.Congested || math.Abs(l.XmitWaitRatio-0.0005) > 1e-9 || *l.XmitWaitVL != 2 {
		t.Fatalf("no limit: %s %v ratio %g VL %v", l.Verdict, l.Congested, l.XmitWaitRatio, l.XmitWaitVL)
	}
	if vr := l.A.Counters.VLXmitWait; vr == nil || vr.Increments != nil || vr.Values[2] != 12500 {
		t.Fatalf("first VL reading %+v, want VL2 at 12500 and no increments", vr)
	}
	clk.Add(100 * time.Millisecond)
	ph = hc.Check(context.Background(), r)
	if vr := ph.Links[li].A.Counters.VLXmitWait; vr == nil || len(vr.Increments) != 16 || vr.Increments[2] != 12500 || vr.Values[2] != 25000 {
		t.Fatalf("second VL reading %+v, want VL2 up by 12500 to 25000", vr)
	}
}

// TestVLXmitWaitUnsupported: a PMA without PortVLXmitWaitCounters says so
// once; the link is judged all the same and the PMA is not asked again.
func TestVLXmitWaitUnsupported(t *testing.T) {
	s, _, hc, r, clk := healthSetup(t, Options{Counters: true, XmitWaitLimit: 0.1})
	li := congest(t, s, r, 1, 3, 0.5)
	if err := s.f.SetPMANoVLXmitWait(s.f.NodeByGUID(r.Hops[1].NodeGUID).Name, true); err != nil {
		t.Fatal(err)
	}
	hc.Check(context.Background(), r)
	clk.Add(10 * time.Second)
	ph := hc.Check(context.Background(), r)
	l := ph.Links[li]
	if l.Verdict != LinkCongested || l.XmitWaitVL != nil || l.A.Counters.VLXmitWait == nil || l.A.Counters.VLXmitWait.Err == "" {
		t.Fatalf("without the VL attribute: %s VL %v reading %+v", l.Verdict, l.XmitWaitVL, l.A.Counters.VLXmitWait)
	}
	clk.Add(10 * time.Second)
	ph = hc.Check(context.Background(), r)
	if l := ph.Links[li]; l.Verdict != LinkCongested || l.A.Counters.VLXmitWait != nil {
		t.Fatalf("asked again: %s %+v", l.Verdict, l.A.Counters.VLXmitWait)
	}
}

// TestVLXmitWaitOnValues: judging one reading's values (ibtracer --pm
// without --pm-interval), a port whose PortXmitWait is not 0 has its VLs
// read; no ratio without an interval.
func TestVLXmitWaitOnValues(t *testing.T) {
	s, _, hc, r, clk := healthSetup(t, Options{Counters: true, LimitValues: true, XmitWaitLimit: 0.1})
	li := congest(t, s, r, 2, 7, 0.001)
	clk.Add(10 * time.Millisecond)
	ph := hc.Check(context.Background(), r)
	l := ph.Links[li]
	if l.XmitWaitRatio != 0 || l.Verdict != LinkOK || l.A.Counters.VLXmitWait.TopVL() != 7 {
		t.Fatalf("one reading: ratio %g verdict %s VLs %+v", l.XmitWaitRatio, l.Verdict, l.A.Counters.VLXmitWait)
	}
	for i, q := range ph.Links {
		if i != li && (q.A.Counters.VLXmitWait != nil || q.B.Counters.VLXmitWait != nil) {
			t.Fatalf("link %d: VLs read although nothing waited", i)
		}
	}
}

func TestSymbolSeconds(t *testing.T) {
	for _, c := range []struct {
		s    Speed
		want float64
	}{{SpeedSDR, 4e-9}, {SpeedQDR, 1e-9}, {SpeedEDR, 0.33e-9}, {SpeedUnknown, 0}} {
		if got := symbolSeconds(c.s); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("%s: %g s, want %g", c.s, got, c.want)
		}
	}
}

// TestSaturatedXmitWait: a legacy PMA's 32-bit PortXmitWait that rose to
// its maximum gives a lower bound; stuck there, the ratio is unknown (0),
// never "no congestion" made up from a zero increment.
func TestSaturatedXmitWait(t *testing.T) {
	s, _, hc, r, clk := healthSetup(t, Options{Counters: true, XmitWaitLimit: 0.05})
	n := s.f.NodeByGUID(r.Hops[1].NodeGUID)
	if err := s.f.SetPMALegacy(n.Name, true); err != nil {
		t.Fatal(err)
	}
	li := congest(t, s, r, 1, 0, 0.5) // 6.25e7 ticks a second: 2^32 in 68.7 s
	hc.Check(context.Background(), r)
	clk.Add(60 * time.Second)
	ph := hc.Check(context.Background(), r)
	if l := ph.Links[li]; !l.Congested || math.Abs(l.XmitWaitRatio-0.5) > 1e-6 || l.A.Counters.Extended {
		t.Fatalf("before saturation: congested %v ratio %g extended %v", l.Congested, l.XmitWaitRatio, l.A.Counters.Extended)
	}
	clk.Add(60 * time.Second) // saturates at 68.7 s: the increment is a lower bound
	ph = hc.Check(context.Background(), r)
	l := ph.Links[li]
	want := float64(1<<32-1-60*62_500_000) * 8e-9 / 60
	if l.A.Counters.State != CountersSaturated || !l.XmitWaitKnown || math.Abs(l.XmitWaitRatio-want) > 1e-6 || !l.Congested {
		t.Fatalf("reaching saturation: state %s ratio %g (want %g) congested %v", l.A.Counters.State, l.XmitWaitRatio, want, l.Congested)
	}
	clk.Add(60 * time.Second)
	ph = hc.Check(context.Background(), r)
	if l := ph.Links[li]; l.A.Counters.State != CountersSaturated || l.XmitWaitKnown || l.XmitWaitRatio != 0 || l.XmitWaitEnd != "" || l.Congested || l.Verdict != LinkOK {
		t.Fatalf("stuck at the maximum: state %s ratio %g end %q congested %v verdict %s", l.A.Counters.State,
			l.XmitWaitRatio, l.XmitWaitEnd, l.Congested, l.Verdict)
	}
}

// TestVLXmitWaitCost: the per-VL waits cost one PerfMgt Get per check at
// each link end whose PortXmitWait rose since its last reading, and
// nothing once it stops rising (docs/metrics.md, "Congestion").
func TestVLXmitWaitCost(t *testing.T) {
	s, _, hc, r, clk := healthSetup(t, Options{Counters: true, XmitWaitLimit: 0.05})
	check := func() int {
		clk.Add(10 * time.Second)
		return hc.Check(context.Background(), r).MADs
	}
	check()
	quiet := check()
	congest(t, s, r, 1, 0, 0.2)
	congest(t, s, r, 3, 0, 0.2)
	first := check() // two ends waited: their VLs are read
	n := s.f.NodeByGUID(r.Hops[1].NodeGUID)
	if err := s.f.SetXmitWaitRate(n.Name, int(r.Hops[1].OutPort), 0, nil); err != nil {
		t.Fatal(err)
	}
	one := check() // the climb at hop 1 stopped at the last reading: one end still waits
	if first != quiet+2 || one != quiet+1 {
		t.Fatalf("MADs a check: %d with no end waiting, %d with two, %d with one", quiet, first, one)
	}
}

// TestTopVLNamesNoVLAmongStuckCounters: without increments the top VL is
// taken from the values; when several 16-bit counters are stuck at their
// maximum, their values cannot tell which VL waits most, so no VL is
// named (rather than the lowest-numbered one).
func TestTopVLNamesNoVLAmongStuckCounters(t *testing.T) {
	vals := func(m map[int]uint64) []uint64 {
		v := make([]uint64, 16)
		for i, n := range m {
			v[i] = n
		}
		return v
	}
	for _, c := range []struct {
		values map[int]uint64
		want   int
	}{
		{map[int]uint64{0: 0xFFFF, 3: 0xFFFF}, -1},
		{map[int]uint64{2: 0xFFFF, 5: 100}, 2},
		{map[int]uint64{1: 7, 4: 9}, 4},
		{nil, -1},
	} {
		r := &VLXmitWaitReading{Values: vals(c.values)}
		if got := r.TopVL(); got != c.want {
			t.Errorf("values %v: top VL %d, want %d", c.values, got, c.want)
		}
	}
}
