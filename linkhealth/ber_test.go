package linkhealth

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// endName is the sim name and port of link li's end ("a" or "b") of r.
func endName(s *fixture, r *trace.Result, li int, end string) (string, int) {
	if end == "a" {
		return s.f.NodeByGUID(r.Hops[li].NodeGUID).Name, int(r.Hops[li].OutPort)
	}
	return s.f.NodeByGUID(r.Hops[li+1].NodeGUID).Name, int(r.Hops[li+1].InPort)
}

func addErrors(t *testing.T, s *fixture, r *trace.Result, li int, end string, e sim.PortErrors) {
	t.Helper()
	n, p := endName(s, r, li, end)
	if err := s.f.AddPortErrors(n, p, e); err != nil {
		t.Fatal(err)
	}
}

// TestBERWindow: on 4X QDR (40 Gb/s) a 1e-12 target needs 25 s; over
// 10 s a link without errors is not yet known, never ok, and one with 5
// errors already above target (more than 4e11 × 1e-12); over 30 s
// the link with 100 symbol errors at one end is above target (that end
// named), the others ok; the running totals sum every window.
func TestBERWindow(t *testing.T) {
	s, _, hc, r, clk := healthSetup(t, Options{Counters: true})
	ctx := context.Background()
	ph := hc.Check(ctx, r)
	if l := ph.Links[1]; l.BERState != BERNotYetKnown || l.A.Counters.BER == nil || l.A.Counters.BER.WindowSeconds != 0 {
		t.Fatalf("first reading: BER state %q, a's %+v", l.BERState, l.A.Counters.BER)
	}
	clk.Add(10 * time.Second)
	addErrors(t, s, r, 1, "b", sim.PortErrors{SymbolErrors: 5})
	ph = hc.Check(ctx, r)
	for i, l := range ph.Links {
		want := BERNotYetKnown
		if i == 1 {
			want = BERAboveTarget // 5 errors in 4e11 bits: more than the 0.4 that 1e-12 allows
		}
		if l.BERState != want {
			t.Fatalf("10 s: link %d BER %q (%g), want %q", i, l.BERState, l.BER, want)
		}
	}
	if b := ph.Links[1].B.Counters.BER; b.SymbolErrors != 5 || b.Bits != 4e11 || b.WindowSeconds != 10 || b.RateBits != 40e9 {
		t.Fatalf("10 s: b's BER reading %+v", b)
	}
	clk.Add(30 * time.Second)
	addErrors(t, s, r, 1, "b", sim.PortErrors{SymbolErrors: 100})
	ph = hc.Check(ctx, r)
	l := ph.Links[1]
	if l.BERState != BERAboveTarget || l.BEREnd != "b" || l.Healthy || math.Abs(l.BER-100/1.2e12) > 1e-20 ||
		l.BERWindowSeconds != 30 || l.BERTarget != DefaultBERTarget || ph.Healthy {
		t.Fatalf("30 s, 100 errors: %q end %q BER %g window %g target %g healthy %v", l.BERState, l.BEREnd, l.BER,
			l.BERWindowSeconds, l.BERTarget, l.Healthy)
	}
	if b := l.B.Counters.BER; b.TotalSymbolErrors != 105 || b.TotalBits != 1.6e12 {
		t.Fatalf("totals: %+v", b)
	}
	for i, o := range ph.Links {
		if i != 1 && (o.BERState != BEROK || !o.Healthy) {
			t.Fatalf("link %d without errors over 30 s: BER %q healthy %v", i, o.BERState, o.Healthy)
		}
	}
}

// TestBERTargetPerKind: a switch link's target overrides the general
// one; a host link keeps the general one.
func TestBERTargetPerKind(t *testing.T) {
	_, _, hc, r, clk := healthSetup(t, Options{Counters: true, BERTarget: 1e-11, SwitchLinks: Expect{BER: 1e-14}})
	hc.Check(context.Background(), r)
	clk.Add(30 * time.Second)
	ph := hc.Check(context.Background(), r)
	for _, l := range ph.Links {
		want, st := 1e-11, BEROK
		if l.Kind == KindSwitch {
			want, st = 1e-14, BERNotYetKnown // 1e14 bits need 2,500 s at 40 Gb/s
		}
		if l.BERTarget != want || l.BERState != st {
			t.Fatalf("%s link: target %g state %q, want %g %q", l.Kind, l.BERTarget, l.BERState, want, st)
		}
	}
}

// TestErrorDetailsOnlyWhenRisen: PortRcvErrorDetails and
// PortXmitDiscardDetails are read only at the end whose PortRcvErrors or
// PortXmitDiscards rose, one MAD each; a quiet interval costs none.
func TestErrorDetailsOnlyWhenRisen(t *testing.T) {
	s, _, hc, r, clk := healthSetup(t, Options{Counters: true})
	ctx := context.Background()
	hc.Check(ctx, r)
	clk.Add(10 * time.Second)
	quiet := hc.Check(ctx, r).MADs
	addErrors(t, s, r, 2, "a", sim.PortErrors{RcvErrors: 4, RcvErrorDetails: [6]uint64{1, 0, 3}})
	addErrors(t, s, r, 2, "b", sim.PortErrors{XmitDiscards: 2, XmitDiscardDetails: [4]uint64{0, 0, 0, 2}})
	clk.Add(10 * time.Second)
	ph := hc.Check(ctx, r)
	if ph.MADs != quiet+2 {
		t.Fatalf("%d MADs with errors at two ends, %d quiet: want 2 more", ph.MADs, quiet)
	}
	a, b := ph.Links[2].A.Counters, ph.Links[2].B.Counters
	if a.RcvErrorDetails["PortLocalPhysicalErrors"] != 1 || a.RcvErrorDetails["PortBufferOverrunErrors"] != 3 ||
		a.XmitDiscardDetails != nil || a.DetailsErr != "" {
		t.Fatalf("a: %+v %+v %q", a.RcvErrorDetails, a.XmitDiscardDetails, a.DetailsErr)
	}
	if b.XmitDiscardDetails["PortSwHOQLifetimeLimitDiscards"] != 2 || b.RcvErrorDetails != nil {
		t.Fatalf("b: %+v %+v", b.RcvErrorDetails, b.XmitDiscardDetails)
	}
	for i, l := range ph.Links {
		if i != 2 && (l.A.Counters.RcvErrorDetails != nil || l.B.Counters.XmitDiscardDetails != nil) {
			t.Fatalf("link %d read details without errors", i)
		}
	}
}

// TestFECAtFDRAndFaster: PortExtendedSpeedsCounters is read at the ends of
// the one link trained at HDR, nowhere else; its blocks rise; an RS-FEC
// PMA is read in the RS-FEC layout at HDR and not asked at EDR; a PMA
// without the attribute is asked once.
func TestFECAtFDRAndFaster(t *testing.T) {
	s, _, hc, r, clk := healthSetup(t, Options{Counters: true})
	ctx := context.Background()
	an, ap := endName(s, r, 1, "a")
	hdr := &sim.LinkTraining{WidthActive: 2, WidthSupported: 2, ExtActive: 4, ExtSupported: 4}
	if err := s.f.SetLinkTraining(an, ap, hdr); err != nil {
		t.Fatal(err)
	}
	hc.Check(ctx, r)
	clk.Add(10 * time.Second)
	addErrors(t, s, r, 1, "b", sim.PortErrors{FECCorrected: 1000, FECUncorrectable: 2})
	ph := hc.Check(ctx, r)
	for i, l := range ph.Links {
		if (l.A.Counters.FEC != nil) != (i == 1) || (l.B.Counters.FEC != nil) != (i == 1) {
			t.Fatalf("link %d at %s: FEC read %v/%v", i, l.Speed, l.A.Counters.FEC != nil, l.B.Counters.FEC != nil)
		}
	}
	f := ph.Links[1].B.Counters.FEC
	if !f.Known || f.CorrectedInc != 1000 || f.UncorrectableInc != 2 || f.TotalUncorrectable != 2 || f.RSFEC || f.Err != "" {
		t.Fatalf("HDR end b: %+v", f)
	}
	bn, _ := endName(s, r, 1, "b")
	if err := s.f.SetPMAExtendedSpeeds(bn, true, false); err != nil {
		t.Fatal(err)
	}
	hc2 := NewChecker(s.tr, Options{Counters: true})
	hc2.Check(ctx, r)
	clk.Add(10 * time.Second)
	addErrors(t, s, r, 1, "b", sim.PortErrors{FECUncorrectable: 1})
	f = hc2.Check(ctx, r).Links[1].B.Counters.FEC
	if !f.RSFEC || f.Uncorrectable != 3 || f.UncorrectableInc != 1 {
		t.Fatalf("RS-FEC PMA at HDR: %+v", f)
	}
	edr := *hdr
	edr.ExtActive, edr.ExtSupported = 2, 2
	_ = s.f.SetLinkTraining(an, ap, &edr)
	clk.Add(10 * time.Second)
	// Review 1, finding 7: not asked, and the reading says why.
	if f := hc2.Check(ctx, r).Links[1].B.Counters.FEC; f == nil || f.Err != FECNotReadRSFEC || f.Known || f.Corrected != 0 {
		t.Fatalf("RS-FEC PMA at EDR (layout unknown without PortInfoExtended): %+v, want not read, saying why", f)
	}
	if err := s.f.SetPMAExtendedSpeeds(bn, false, true); err != nil {
		t.Fatal(err)
	}
	_ = s.f.SetLinkTraining(an, ap, hdr)
	hc3 := NewChecker(s.tr, Options{Counters: true})
	first := hc3.Check(ctx, r)
	clk.Add(10 * time.Second)
	second := hc3.Check(ctx, r)
	if f := first.Links[1].B.Counters.FEC; f == nil || f.Err == "" {
		t.Fatalf("PMA without the attribute: %+v", f)
	}
	if f := second.Links[1].B.Counters.FEC; f != nil {
		t.Fatalf("PMA without the attribute asked again: %+v", f)
	}
}

// TestDataCountersWithoutCapabilityMask2: a PMA with PortCountersExtended
// but without its error counters (CapabilityMask2 0, as ibsim's) gives
// the errors from PortCounters; DataCounters reads its data counters too,
// one MAD more a port.
func TestDataCountersWithoutCapabilityMask2(t *testing.T) {
	s := newFixture(t)
	var none uint32
	for _, n := range s.f.Nodes() {
		if err := s.f.SetPMACapabilityMask2(n.Name, &none); err != nil {
			t.Fatal(err)
		}
	}
	r := s.trace(s.lid("H1-2"))
	ctx := context.Background()
	// The second check of each: the first may read a switch's port 0
	// twice, from two ends at once.
	hp, hd := NewChecker(s.tr, Options{Counters: true}), NewChecker(s.tr, Options{Counters: true, DataCounters: true})
	hp.Check(ctx, r)
	hd.Check(ctx, r)
	plain, data := hp.Check(ctx, r), hd.Check(ctx, r)
	ends := 2 * len(plain.Links)
	if data.MADs != plain.MADs+ends {
		t.Fatalf("DataCounters: %d MADs, without %d: want %d more", data.MADs, plain.MADs, ends)
	}
	for i, l := range data.Links {
		c := l.A.Counters
		if c.Extended || c.Data == nil || c.Data["PortXmitPkts"] == 0 || plain.Links[i].A.Counters.Data != nil {
			t.Fatalf("link %d: extended %v data %v", i, c.Extended, c.Data)
		}
	}
}

// TestFECCostsOneMADAnEnd: a link trained at HDR costs one
// PortExtendedSpeedsCounters Get at each of its ends an interval, and
// nothing else.
func TestFECCostsOneMADAnEnd(t *testing.T) {
	s, _, hc, r, clk := healthSetup(t, Options{Counters: true})
	ctx := context.Background()
	hc.Check(ctx, r)
	clk.Add(10 * time.Second)
	qdr := hc.Check(ctx, r).MADs
	an, ap := endName(s, r, 1, "a")
	if err := s.f.SetLinkTraining(an, ap, &sim.LinkTraining{WidthActive: 2, WidthSupported: 2, ExtActive: 4, ExtSupported: 4}); err != nil {
		t.Fatal(err)
	}
	clk.Add(10 * time.Second)
	if hdr := hc.Check(ctx, r).MADs; hdr != qdr+2 {
		t.Fatalf("%d MADs with one HDR link, %d at QDR: want 2 more", hdr, qdr)
	}
}

// TestBERSaturatedNeverOK: review 1, finding 1. A 16-bit
// SymbolErrorCounter stuck at 65,535 rose by an unknown amount: its BER
// is not yet known (never ok, the link never healthy for it), and no
// bits are counted in the running totals while it is (they would thin
// the rate the rules compute). The window in which it reached its
// maximum counts what could be seen, a lower bound: above target.
func TestBERSaturatedNeverOK(t *testing.T) {
	s, _, hc, r, clk := healthSetup(t, Options{Counters: true})
	ctx := context.Background()
	bn, _ := endName(s, r, 1, "b")
	if err := s.f.SetPMALegacy(bn, true); err != nil {
		t.Fatal(err)
	}
	addErrors(t, s, r, 1, "b", sim.PortErrors{SymbolErrors: 65000})
	hc.Check(ctx, r)
	clk.Add(60 * time.Second)
	addErrors(t, s, r, 1, "b", sim.PortErrors{SymbolErrors: 5000})
	l := hc.Check(ctx, r).Links[1]
	b := l.B.Counters.BER
	if l.BERState != BERAboveTarget || l.BEREnd != "b" || !b.Saturated || b.SymbolErrors != 535 || b.TotalSymbolErrors != 535 ||
		b.TotalBits != 2.4e12 {
		t.Fatalf("saturating: %q end %q, b's %+v", l.BERState, l.BEREnd, b)
	}
	clk.Add(60 * time.Second)
	addErrors(t, s, r, 1, "b", sim.PortErrors{SymbolErrors: 100000})
	l = hc.Check(ctx, r).Links[1]
	b = l.B.Counters.BER
	if l.BERState != BERNotYetKnown || l.BEREnd != "b" || !b.Saturated || b.TotalSymbolErrors != 535 || b.TotalBits != 2.4e12 {
		t.Fatalf("saturated, 100,000 more errors: %q end %q healthy %v, b's %+v", l.BERState, l.BEREnd, l.Healthy, b)
	}
}

// TestBERAboveTargetBeforeTheWindow: review 1, finding 2. Errors above
// rate × window × target prove the rate above target whatever the
// window; only "ok" waits for 1/target bits. A switch link's 1e-14 needs
// 2,500 s at 4X QDR: over 30 s, 100 symbol errors at one end are above
// target, the other switch link without errors is not yet known.
func TestBERAboveTargetBeforeTheWindow(t *testing.T) {
	s, _, hc, r, clk := healthSetup(t, Options{Counters: true, SwitchLinks: Expect{BER: 1e-14}})
	ctx := context.Background()
	hc.Check(ctx, r)
	clk.Add(30 * time.Second)
	addErrors(t, s, r, 1, "b", sim.PortErrors{SymbolErrors: 100})
	ph := hc.Check(ctx, r)
	if l := ph.Links[1]; l.Kind != KindSwitch || l.BERState != BERAboveTarget || l.BEREnd != "b" || l.Healthy {
		t.Fatalf("switch link, 100 errors in 30 s (%g): %q end %q healthy %v", 100/1.2e12, l.BERState, l.BEREnd, l.Healthy)
	}
	if l := ph.Links[2]; l.Kind != KindSwitch || l.BERState != BERNotYetKnown {
		t.Fatalf("switch link without errors over 30 s: %q", l.BERState)
	}
}

// TestBERNamesTheWorseEnd: review 1, finding 8. Both ends above target:
// the link's BER is the worse end's.
func TestBERNamesTheWorseEnd(t *testing.T) {
	s, _, hc, r, clk := healthSetup(t, Options{Counters: true})
	ctx := context.Background()
	hc.Check(ctx, r)
	clk.Add(30 * time.Second)
	addErrors(t, s, r, 1, "a", sim.PortErrors{SymbolErrors: 10})
	addErrors(t, s, r, 1, "b", sim.PortErrors{SymbolErrors: 1000})
	l := hc.Check(ctx, r).Links[1]
	if l.BERState != BERAboveTarget || l.BEREnd != "b" || l.BER != 1000/1.2e12 {
		t.Fatalf("10 errors at a, 1000 at b: %q end %q BER %g", l.BERState, l.BEREnd, l.BER)
	}
}

// TestFECSaturated: review 1, finding 6. FEC block counters are 32 bits
// a lane: one stuck at 0xFFFFFFFF in two readings rose by an unknown
// amount, never by a known 0.
func TestFECSaturated(t *testing.T) {
	s, _, hc, r, clk := healthSetup(t, Options{Counters: true})
	ctx := context.Background()
	an, ap := endName(s, r, 1, "a")
	if err := s.f.SetLinkTraining(an, ap, &sim.LinkTraining{WidthActive: 2, WidthSupported: 2, ExtActive: 4, ExtSupported: 4}); err != nil {
		t.Fatal(err)
	}
	addErrors(t, s, r, 1, "b", sim.PortErrors{FECUncorrectable: 1 << 32})
	hc.Check(ctx, r)
	clk.Add(10 * time.Second)
	addErrors(t, s, r, 1, "b", sim.PortErrors{FECUncorrectable: 1000})
	f := hc.Check(ctx, r).Links[1].B.Counters.FEC
	if f == nil || !f.Saturated || f.Known || f.Uncorrectable != 0xFFFFFFFF {
		t.Fatalf("a lane stuck at 0xFFFFFFFF: %+v", f)
	}
}

// TestDataCountersWithoutIETF: review 1, finding 10. A PMA that sets
// ClassPortInfo CapabilityMask bit 10 (PortCountersExtended without the
// IETF counters) and not bit 9 has no unicast and multicast counters:
// they are left out, never shown as 0.
func TestDataCountersWithoutIETF(t *testing.T) {
	s := newFixture(t)
	var none uint32
	for _, n := range s.f.Nodes() {
		if err := s.f.SetPMACapabilityMask2(n.Name, &none); err != nil {
			t.Fatal(err)
		}
		if err := s.f.SetPMANoIETF(n.Name, true); err != nil {
			t.Fatal(err)
		}
	}
	r := s.trace(s.lid("H1-2"))
	c := NewChecker(s.tr, Options{Counters: true, DataCounters: true}).Check(context.Background(), r).Links[0].A.Counters
	if c.Data == nil || c.Data["PortXmitPkts"] == 0 {
		t.Fatalf("data counters: %v", c.Data)
	}
	for _, n := range []string{"PortUnicastXmitPkts", "PortUnicastRcvPkts", "PortMulticastXmitPkts", "PortMulticastRcvPkts"} {
		if v, ok := c.Data[n]; ok {
			t.Fatalf("%s = %d from a PMA without the IETF counters: %v", n, v, c.Data)
		}
	}
}
