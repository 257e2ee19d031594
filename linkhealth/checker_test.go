package linkhealth

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/internal/fakeclock"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

func healthSetup(t *testing.T, o Options) (*fixture, *trace.Tracer, *Checker, *trace.Result, *fakeclock.Clock) {
	t.Helper()
	s := newFixture(t)
	hc := NewChecker(s.tr, o)
	r := s.trace(s.lid("H1-2"))
	if r.PathHops() != 4 {
		t.Fatalf("trace: %d hops, want 4", r.PathHops())
	}
	return s, s.tr, hc, r, s.clk
}

func TestHealthOfAHealthyPath(t *testing.T) {
	_, _, hc, r, _ := healthSetup(t, Options{Counters: true, ExpectWidth: 4, ExpectSpeed: SpeedQDR})
	ph := hc.Check(context.Background(), r)
	if !ph.Healthy || ph.DegradedLinks != 0 || len(ph.Links) != 4 {
		t.Fatalf("healthy path: %+v", ph)
	}
	if ph.RateBits != 40e9 || ph.MTUBytes != 4096 {
		t.Fatalf("bottleneck rate %g, MTU %d; want 40e9 (4X QDR) and 4096", ph.RateBits, ph.MTUBytes)
	}
	for i, l := range ph.Links {
		if l.A.NodeGUID != r.Hops[i].NodeGUID || l.A.Port != r.Hops[i].OutPort || l.B.NodeGUID != r.Hops[i+1].NodeGUID || l.B.Port != r.Hops[i+1].InPort {
			t.Fatalf("link %d ends %v/%d %v/%d, hops %+v %+v", i, l.A.NodeGUID, l.A.Port, l.B.NodeGUID, l.B.Port, r.Hops[i], r.Hops[i+1])
		}
		if l.Verdict != LinkOK || l.A.State != "Active" || l.B.PhysState != "LinkUp" || l.Width != 4 || l.Speed != SpeedQDR {
			t.Fatalf("link %d: %+v", i, l)
		}
		for _, e := range []*LinkEnd{&l.A, &l.B} {
			if e.Counters == nil || e.Counters.State != CountersFirst || e.Counters.Err != "" {
				t.Fatalf("link %d end %v: counters %+v", i, e.NodeGUID, e.Counters)
			}
		}
		if l.ErrorsKnown {
			t.Fatalf("link %d: errors known after one reading", i)
		}
	}
}

func TestHealthDegradedWidthAndSpeed(t *testing.T) {
	s, _, hc, r, _ := healthSetup(t, Options{})
	leaf, spine := s.f.NodeByGUID(r.Hops[1].NodeGUID), r.Hops[2]
	if err := s.f.SetLinkWidth(leaf.Name, int(r.Hops[1].OutPort), true); err != nil {
		t.Fatal(err)
	}
	host := s.f.NodeByGUID(r.Hops[4].NodeGUID)
	if err := s.f.SetLinkSpeed(host.Name, int(r.Hops[4].InPort), true); err != nil {
		t.Fatal(err)
	}
	ph := hc.Check(context.Background(), r)
	if ph.Healthy || ph.DegradedLinks != 2 {
		t.Fatalf("degraded path: healthy %v, %d degraded", ph.Healthy, ph.DegradedLinks)
	}
	l := ph.Links[1]
	if l.B.NodeGUID != spine.NodeGUID || l.Verdict != LinkWidthDegraded || l.Width != 1 || l.CouldBeWidth != 4 {
		t.Fatalf("1X link: %+v", l)
	}
	l = ph.Links[3]
	if l.Verdict != LinkSpeedDegraded || l.Speed != SpeedSDR || l.CouldBeSpeed != SpeedQDR || l.RateBits != 10e9 {
		t.Fatalf("SDR link: %+v", l)
	}
	if ph.RateBits != 10e9 {
		t.Fatalf("bottleneck %g, want 10e9 (1X QDR and 4X SDR)", ph.RateBits)
	}
	if !strings.Contains(strings.Join(ph.Unhealthy(), "\n"), "width_degraded") {
		t.Fatalf("unhealthy: %v", ph.Unhealthy())
	}
}

func TestHealthBelowExpected(t *testing.T) {
	_, _, hc, r, _ := healthSetup(t, Options{ExpectWidth: 12, ExpectSpeed: SpeedEDR})
	ph := hc.Check(context.Background(), r)
	if ph.Healthy || ph.DegradedLinks != 4 {
		t.Fatalf("4X QDR links expected at 12X EDR: %+v", ph)
	}
	for _, l := range ph.Links {
		if l.Verdict != LinkBelowExpected || len(l.Problems) != 2 {
			t.Fatalf("link %d: %s %v", l.Hop, l.Verdict, l.Problems)
		}
	}
}

func TestHealthNotActive(t *testing.T) {
	s, _, hc, r, _ := healthSetup(t, Options{})
	// The last link goes down without a re-route: the trace's path
	// crosses a dead link. PortInfo of the far end cannot be read over
	// it; the near end says Down.
	if err := s.f.SetLinkState(s.f.NodeByGUID(r.Hops[3].NodeGUID).Name, int(r.Hops[3].OutPort), false, false); err != nil {
		t.Fatal(err)
	}
	ph := hc.Check(context.Background(), r)
	l := ph.Links[3]
	if ph.Healthy || l.Verdict != LinkNotActive || l.A.State != "Down" {
		t.Fatalf("down link: healthy %v, %+v", ph.Healthy, l)
	}
}

func TestHealthCounterIncrements(t *testing.T) {
	s, _, hc, r, clk := healthSetup(t, Options{Counters: true, Limits: map[string]uint64{"SymbolErrorCounter": 5}})
	spine := s.f.NodeByGUID(r.Hops[2].NodeGUID)
	in := int(r.Hops[2].InPort)
	if err := s.f.SetErrorRate(spine.Name, in, 2, clk.Now); err != nil {
		t.Fatal(err)
	}
	first := hc.Check(context.Background(), r)
	if !first.Healthy || first.LinkErrors != 0 {
		t.Fatalf("first reading: healthy %v, %d errors", first.Healthy, first.LinkErrors)
	}
	clk.Add(10 * time.Second)
	ph := hc.Check(context.Background(), r)
	l := ph.Links[1]
	if !l.ErrorsKnown || l.B.Counters.State != CountersOK {
		t.Fatalf("second reading: %+v %+v", l, l.B.Counters)
	}
	if got := l.B.Counters.Increments["SymbolErrorCounter"]; got != 20 {
		t.Fatalf("SymbolErrorCounter rose by %d in 10 s at 2/s, want 20", got)
	}
	if l.Errors != 40 || ph.LinkErrors != 40 { // symbol and receive errors
		t.Fatalf("link errors %d, path %d; want 40", l.Errors, ph.LinkErrors)
	}
	if ph.Healthy || l.Healthy || len(l.OverLimit) != 1 || l.OverLimit[0] != "b:SymbolErrorCounter" {
		t.Fatalf("over the limit of 5: healthy %v, over %v", ph.Healthy, l.OverLimit)
	}
	for i, o := range ph.Links {
		if i != 1 && (!o.Healthy || o.Errors != 0) {
			t.Fatalf("link %d: %+v", i, o)
		}
	}
}

// pmaSet clears a port's counters as another tool would (perfquery -R).
func pmaSet(t *testing.T, tr *trace.Tracer, lid uint16, port uint8) {
	t.Helper()
	g := ibmad.NewPerfMgtGet(ibmad.AttrPortCounters)
	g.Method = ibmad.MethodSet
	g.Data[1] = port
	req := &ibmad.Request{Addr: ibmad.GSIAddress(lid, 0)}
	_ = g.MarshalTo(req.MAD[:])
	var resp ibmad.Response
	if err := tr.Engine().Do(context.Background(), req, &resp); err != nil || resp.MAD.Status() != 0 {
		t.Fatalf("PortCounters Set: %v %v", err, resp.MAD.Status())
	}
}

func TestHealthCountersGoingBackwardsAreAReset(t *testing.T) {
	s, tr, hc, r, clk := healthSetup(t, Options{Counters: true, Limits: map[string]uint64{"SymbolErrorCounter": 0}})
	spine := s.f.NodeByGUID(r.Hops[2].NodeGUID)
	if err := s.f.SetErrorRate(spine.Name, int(r.Hops[2].InPort), 100, clk.Now); err != nil {
		t.Fatal(err)
	}
	clk.Add(10 * time.Second)
	hc.Check(context.Background(), r) // 1000 errors: the first reading
	pmaSet(t, tr, r.Hops[2].LID, r.Hops[2].InPort)
	clk.Add(time.Second) // 100 more, from 0: less than before
	ph := hc.Check(context.Background(), r)
	l := ph.Links[1]
	if l.B.Counters.State != CountersReset || l.ErrorsKnown || l.Errors != 0 || len(l.OverLimit) != 0 || !l.Healthy {
		t.Fatalf("after a reset: %+v, counters %+v", l, l.B.Counters)
	}
	clk.Add(time.Second)
	ph = hc.Check(context.Background(), r)
	if l := ph.Links[1]; l.B.Counters.State != CountersOK || l.B.Counters.Increments["SymbolErrorCounter"] != 100 {
		t.Fatalf("the reading after the reset: %+v", l.B.Counters)
	}
}

func TestHealthSaturatedCounters(t *testing.T) {
	s, _, hc, r, clk := healthSetup(t, Options{Counters: true, Limits: map[string]uint64{"SymbolErrorCounter": 10}})
	spine := s.f.NodeByGUID(r.Hops[2].NodeGUID)
	if err := s.f.SetPMALegacy(spine.Name, true); err != nil { // no 64-bit counters
		t.Fatal(err)
	}
	if err := s.f.SetErrorRate(spine.Name, int(r.Hops[2].InPort), 1000, clk.Now); err != nil {
		t.Fatal(err)
	}
	clk.Add(65 * time.Second) // 65,000: below 0xFFFF
	hc.Check(context.Background(), r)
	clk.Add(10 * time.Second) // 75,000: saturated at 65,535
	ph := hc.Check(context.Background(), r)
	c := ph.Links[1].B.Counters
	if c.Extended || c.State != CountersSaturated || c.Increments["SymbolErrorCounter"] != 0xFFFF-65000 || len(c.Saturated) != 2 {
		t.Fatalf("saturating: %+v", c)
	}
	clk.Add(10 * time.Second) // still saturated: no rise visible, and no reset
	ph = hc.Check(context.Background(), r)
	c = ph.Links[1].B.Counters
	if c.State != CountersSaturated || c.Increments["SymbolErrorCounter"] != 0 || ph.Links[1].OverLimit != nil {
		t.Fatalf("saturated: %+v, over %v", c, ph.Links[1].OverLimit)
	}
}

func TestHealthPMASilentIsUnavailable(t *testing.T) {
	s, _, hc, r, _ := healthSetup(t, Options{Counters: true})
	// The destination answers nothing at all: PortInfo and the PMA.
	if err := s.f.SetSilent(s.f.NodeByGUID(r.Hops[4].NodeGUID).Name, true); err != nil {
		t.Fatal(err)
	}
	ph := hc.Check(context.Background(), r)
	l := ph.Links[3]
	if l.Verdict != LinkUnknown || l.B.Err == "" || l.B.Counters.State != CountersUnavailable ||
		!strings.Contains(l.B.Counters.Err, "no answer") {
		t.Fatalf("silent destination: %+v, counters %+v", l, l.B.Counters)
	}
	if !ph.Healthy || ph.DegradedLinks != 0 {
		t.Fatalf("an unreadable link is not a degraded one: %+v", ph)
	}
}

func TestHealthSharedReadsAcrossDestinations(t *testing.T) {
	s := newFixture(t)
	hc := NewChecker(s.tr, Options{Counters: true, Share: time.Minute})
	links := map[portKey]bool{}
	mads := 0
	for _, lid := range s.f.CALIDs() {
		r := s.trace(lid)
		ph := hc.Check(context.Background(), r)
		mads += ph.MADs
		for _, l := range ph.Links {
			links[portKey{l.A.NodeGUID, l.A.Port}] = true
			links[portKey{l.B.NodeGUID, l.B.Port}] = true
		}
	}
	nodes := map[ibmad.GUID]bool{}
	for k := range links {
		nodes[k.guid] = true
	}
	// At most one PortInfo and one PortCounters per distinct port, plus
	// one PMA ClassPortInfo per node.
	if limit := 2*len(links) + len(nodes); mads > limit {
		t.Fatalf("%d health MADs for %d distinct ports on %d nodes; want at most %d", mads, len(links), len(nodes), limit)
	}
	t.Logf("%d health MADs for %d ports, %d nodes", mads, len(links), len(nodes))
}

func TestParseLimits(t *testing.T) {
	m := map[string]uint64{}
	err := ParseLimits(strings.NewReader("# ibqueryerrors format\n\nSymbolErrorCounter=10\nLinkDownedCounter = 0x2\n"), m)
	if err != nil || m["SymbolErrorCounter"] != 10 || m["LinkDownedCounter"] != 2 {
		t.Fatalf("%v %v", err, m)
	}
	for _, bad := range []string{"SymbolErrors=1", "SymbolErrorCounter", "SymbolErrorCounter=-1", "PortRcvErrors=x"} {
		if err := ParseLimits(strings.NewReader(bad), map[string]uint64{}); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestParseSpeedAndWidth(t *testing.T) {
	for in, want := range map[string]Speed{"edr": SpeedEDR, "XDR": SpeedXDR, "25": SpeedEDR, "2.5": SpeedSDR} {
		if got, err := ParseSpeed(in); err != nil || got != want {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	if _, err := ParseSpeed("FDR10"); err == nil {
		t.Error("FDR10 parsed")
	}
	if w, err := ParseWidth("4x"); err != nil || w != 4 {
		t.Errorf("4x: %d %v", w, err)
	}
	if _, err := ParseWidth("3x"); err == nil {
		t.Error("3x parsed")
	}
}

// TestDecodeExtendedSpeeds checks the speed decode on hand-built PortInfo:
// extended (FDR..NDR) and XDR only when the capability bit says so.
func TestDecodeExtendedSpeeds(t *testing.T) {
	pi := ibmad.PortInfo{LinkSpeedActive: 4, LinkSpeedSupported: 7, LinkSpeedExtActive: 2, LinkSpeedExtSupported: 0xf}
	if s := decodeSpeeds(&pi, 0); s.active != SpeedQDR || s.extSup != 0 {
		t.Fatalf("without IsExtendedSpeedsSupported: %+v", s)
	}
	a := decodeSpeeds(&pi, ibmad.CapIsExtendedSpeedsSupported)
	if a.active != SpeedEDR {
		t.Fatalf("EDR: %+v", a)
	}
	if c := couldBeSpeed(a, a); c != SpeedNDR {
		t.Fatalf("could be %s, want NDR", c)
	}
	pi.LinkSpeedExtActive2, pi.LinkSpeedExtSupported2 = 1, 1
	x := decodeSpeeds(&pi, ibmad.CapIsExtendedSpeedsSupported)
	if x.active != SpeedXDR || couldBeSpeed(x, x) != SpeedXDR || couldBeSpeed(x, a) != SpeedNDR {
		t.Fatalf("XDR: %+v", x)
	}
	if widestBit(0x1f) != 8 || widthLanes(widestBit(0x13)) != 4 || widthLanes(widestBit(0x11)) != 2 {
		t.Fatal("widest width")
	}
}

func TestHealthPMAErrorStatus(t *testing.T) {
	s, _, hc, r, _ := healthSetup(t, Options{Counters: true, Limits: map[string]uint64{"SymbolErrorCounter": 0}})
	spine := s.f.NodeByGUID(r.Hops[2].NodeGUID)
	if err := s.f.SetPMAStatus(spine.Name, ibmad.StatusMethodAttrUnsupp); err != nil {
		t.Fatal(err)
	}
	ph := hc.Check(context.Background(), r)
	for _, l := range ph.Links[1:3] {
		e := &l.B
		if l.Hop == 3 {
			e = &l.A
		}
		if e.Counters.State != CountersUnavailable || !strings.Contains(e.Counters.Err, "PMA answered") || l.ErrorsKnown {
			t.Fatalf("link %d at the spine: %+v", l.Hop, e.Counters)
		}
		if l.Verdict != LinkOK || !l.Healthy {
			t.Fatalf("link %d: unreadable counters made it %s", l.Hop, l.Verdict)
		}
	}
}

// The walk's own PortInfo of the destination CA's ingress port, and the
// switches' port 0 CapabilityMask, are reused: a path of 4 links (8 ends)
// costs 7 PortInfo reads when shared, 8 when not.
func TestHealthReusesTheWalksPortInfo(t *testing.T) {
	for _, tc := range []struct {
		share time.Duration
		want  int
	}{{time.Minute, 7}, {0, 8}} {
		_, _, hc, r, _ := healthSetup(t, Options{Share: tc.share})
		if ph := hc.Check(context.Background(), r); ph.MADs != tc.want || !ph.Healthy {
			t.Errorf("share %v: %d MADs, want %d (healthy %v)", tc.share, ph.MADs, tc.want, ph.Healthy)
		}
	}
}

// A PMA without extended counters (as ibsim's): PortCounters, with
// PortXmitWait since it advertises it (CapabilityMask bit 12).
func TestHealthLegacyPMA(t *testing.T) {
	s, _, hc, r, _ := healthSetup(t, Options{Counters: true})
	dst := s.f.NodeByGUID(r.Hops[4].NodeGUID)
	if err := s.f.SetPMALegacy(dst.Name, true); err != nil {
		t.Fatal(err)
	}
	c := hc.Check(context.Background(), r).Links[3].B.Counters
	if _, ok := c.Values["PortXmitWait"]; !ok || c.Extended || c.State != CountersFirst {
		t.Fatalf("legacy PMA (it advertises PortXmitWait): %+v", c)
	}
}

// FuzzLinkVerdict: any two PortInfo attributes give a verdict, never a
// panic, and a healthy verdict only for two active ends.
func FuzzLinkVerdict(f *testing.F) {
	f.Add(make([]byte, 128), uint32(0))
	f.Add(append(make([]byte, 31), 2, 0x74, 0x52), ibmad.CapIsExtendedSpeedsSupported)
	f.Fuzz(func(t *testing.T, b []byte, caps uint32) {
		b = append(b, make([]byte, 128)...)
		var pa, pb ibmad.PortInfo
		_ = pa.UnmarshalBinary(b[:64])
		_ = pb.UnmarshalBinary(b[64:128])
		hc := &Checker{opts: Options{ExpectWidth: 4, ExpectSpeed: SpeedEDR}}
		l := Link{A: LinkEnd{pi: pa, capMask: caps, ok: true}, B: LinkEnd{pi: pb, capMask: caps, ok: true}}
		l.A.describe()
		l.B.describe()
		hc.judge(&l)
		if l.Verdict == "" || (l.Verdict == LinkOK && (!l.A.active() || !l.B.active())) {
			t.Fatalf("verdict %q for %s/%s and %s/%s", l.Verdict, l.A.State, l.A.PhysState, l.B.State, l.B.PhysState)
		}
	})
}
