package linkhealth

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// otherPort is a port of hop i's node that the path does not use.
func otherPort(t *testing.T, s *fixture, hopIn, hopOut uint8, name string) uint8 {
	t.Helper()
	n := s.f.Node(name)
	for p := 1; p <= n.NumPorts(); p++ {
		if uint8(p) != hopIn && uint8(p) != hopOut {
			return uint8(p)
		}
	}
	t.Fatalf("%s: no port off the path", name)
	return 0
}

// spineEnds are the two link ends at the spine (hop 2) of the fixture's
// path: the b end of link 1 and the a end of link 2.
func spineEnds(ph *PathHealth) []*LinkEnd { return []*LinkEnd{&ph.Links[1].B, &ph.Links[2].A} }

// TestPMAAnswerForAnotherPort: a PMA that answers a port's counters with
// another port's (its PortSelect names the other port) is not read as
// this port's: the reading is unavailable, its error names the LID, the
// port asked and the port answered, and the other port's errors are on
// no link of the path.
func TestPMAAnswerForAnotherPort(t *testing.T) {
	s, _, hc, r, clk := healthSetup(t, Options{Counters: true, Limits: map[string]uint64{"SymbolErrorCounter": 5}})
	spine := s.f.NodeByGUID(r.Hops[2].NodeGUID)
	off := otherPort(t, s, r.Hops[2].InPort, r.Hops[2].OutPort, spine.Name)
	if err := s.f.SetErrorRate(spine.Name, int(off), 2, clk.Now); err != nil {
		t.Fatal(err)
	}
	if err := s.f.SetPMAMisanswer(spine.Name, &sim.PMAMisanswer{Ports: map[ibmad.AttrID]uint8{
		ibmad.AttrPortCounters: off, ibmad.AttrPortCountersExtended: off}}); err != nil {
		t.Fatal(err)
	}
	hc.Check(context.Background(), r)
	clk.Add(10 * time.Second) // 20 symbol and 20 receive errors on the other port
	ph := hc.Check(context.Background(), r)
	for _, e := range spineEnds(ph) {
		c := e.Counters
		want := fmt.Sprintf("PerfMgt PortCountersExtended of LID %d port %d: the PMA answered for port %d", e.LID, e.Port, off)
		if c == nil || c.State != CountersUnavailable || !strings.Contains(c.Err, want) || c.Values != nil || c.Increments != nil {
			t.Fatalf("spine port %d, answered for port %d: counters %+v, want unavailable with %q", e.Port, off, c, want)
		}
	}
	if ph.LinkErrors != 0 || !ph.Healthy {
		t.Fatalf("another port's errors judged on the path: %d errors, healthy %v", ph.LinkErrors, ph.Healthy)
	}
	for _, l := range ph.Links[1:3] {
		if l.Errors != 0 || l.ErrorsKnown || len(l.OverLimit) != 0 || !l.Healthy {
			t.Fatalf("link %d: errors %d known %v over %v healthy %v", l.Hop, l.Errors, l.ErrorsKnown, l.OverLimit, l.Healthy)
		}
	}
	// Repaired, the spine's ports read again (the first reading since).
	if err := s.f.SetPMAMisanswer(spine.Name, nil); err != nil {
		t.Fatal(err)
	}
	clk.Add(10 * time.Second)
	ph = hc.Check(context.Background(), r)
	for _, e := range spineEnds(ph) {
		if c := e.Counters; c.State != CountersFirst || c.Err != "" {
			t.Fatalf("repaired, spine port %d: %+v", e.Port, c)
		}
	}
}

// TestPMAAnswerForAnotherAttribute: an answer for another attribute than
// asked (its attribute ID) is not decoded as the one asked, for the
// counters and for ClassPortInfo (the PMA's capabilities). The engine
// drops it as the answer to another question (ibmad's pending.go, counted
// as wrong_attribute), so the reading is unavailable for want of an
// answer.
func TestPMAAnswerForAnotherAttribute(t *testing.T) {
	for _, tc := range []struct{ asked, answered ibmad.AttrID }{
		{ibmad.AttrPortCountersExtended, ibmad.AttrPortCounters},
		{ibmad.AttrClassPortInfo, ibmad.AttrPortCounters},
		{ibmad.AttrPortCountersExtended, ibmad.AttrPortVLXmitWaitCounters},
	} {
		asked, answered := ibmad.AttrName(ibmad.ClassPerfMgt, tc.asked), ibmad.AttrName(ibmad.ClassPerfMgt, tc.answered)
		t.Run(asked+"_"+answered, func(t *testing.T) {
			s, _, hc, r, _ := healthSetup(t, Options{Counters: true})
			spine := s.f.NodeByGUID(r.Hops[2].NodeGUID)
			if err := s.f.SetPMAMisanswer(spine.Name, &sim.PMAMisanswer{Attrs: map[ibmad.AttrID]ibmad.AttrID{tc.asked: tc.answered}}); err != nil {
				t.Fatal(err)
			}
			before := s.e.Stats().Drops[ibmad.DropWrongAttribute]
			ph := hc.Check(context.Background(), r)
			for _, e := range spineEnds(ph) {
				c := e.Counters
				want := fmt.Sprintf("PerfMgt %s of LID %d port %d: no answer", asked, e.LID, e.Port)
				if c == nil || c.State != CountersUnavailable || !strings.Contains(c.Err, want) || c.Values != nil {
					t.Fatalf("spine port %d: counters %+v, want unavailable with %q", e.Port, c, want)
				}
			}
			if d := s.e.Stats().Drops[ibmad.DropWrongAttribute] - before; d == 0 {
				t.Fatalf("the answers about %s were not counted as wrong_attribute", answered)
			}
			for i, l := range ph.Links {
				if i == 1 || i == 2 {
					continue
				}
				if c := l.B.Counters; c.State != CountersFirst || c.Err != "" {
					t.Fatalf("link %d (no fault): %+v", i, c)
				}
			}
		})
	}
}

// TestVLXmitWaitAnswerForAnotherPort: the per-VL waits of another port
// name no VL for this one: the VL reading is an error naming both ports,
// and the link stays congested by its own PortXmitWait.
func TestVLXmitWaitAnswerForAnotherPort(t *testing.T) {
	s, _, hc, r, clk := healthSetup(t, Options{Counters: true, XmitWaitLimit: 0.1})
	li := congest(t, s, r, 1, 5, 0.5)
	leaf := s.f.NodeByGUID(r.Hops[1].NodeGUID)
	off := otherPort(t, s, r.Hops[1].InPort, r.Hops[1].OutPort, leaf.Name)
	if err := s.f.SetVLXmitWaitRate(leaf.Name, int(off), 2, ticksFor(0.9), clk.Now); err != nil {
		t.Fatal(err)
	}
	if err := s.f.SetPMAMisanswer(leaf.Name, &sim.PMAMisanswer{Ports: map[ibmad.AttrID]uint8{ibmad.AttrPortVLXmitWaitCounters: off}}); err != nil {
		t.Fatal(err)
	}
	hc.Check(context.Background(), r)
	clk.Add(10 * time.Second)
	l := hc.Check(context.Background(), r).Links[li]
	vr := l.A.Counters.VLXmitWait
	want := fmt.Sprintf("PerfMgt PortVLXmitWaitCounters of LID %d port %d: the PMA answered for port %d", l.A.LID, l.A.Port, off)
	if vr == nil || !strings.Contains(vr.Err, want) || vr.Values != nil || vr.Increments != nil {
		t.Fatalf("VL reading %+v, want an error with %q", vr, want)
	}
	if l.Verdict != LinkCongested || l.XmitWaitVL != nil {
		t.Fatalf("link %d: verdict %s, VL %v; want congested, no VL", li, l.Verdict, l.XmitWaitVL)
	}
	if slices.Contains(l.A.Counters.Saturated, "PortXmitWait") {
		t.Fatalf("own PortXmitWait saturated: %+v", l.A.Counters)
	}
}

// TestPMAWithoutPortSelect: a PMA that fills in the counters only and
// leaves PortSelect 0 in its answer (as the Linux mlx5 driver's own PMA
// does) is read at a CA, which has no port 0: its counters are the
// port's. At a switch, port 0 is a port of its own: the answer is for
// another port.
func TestPMAWithoutPortSelect(t *testing.T) {
	s, _, hc, r, clk := healthSetup(t, Options{Counters: true})
	dst := s.f.NodeByGUID(r.Hops[4].NodeGUID)
	spine := s.f.NodeByGUID(r.Hops[2].NodeGUID)
	if err := s.f.SetErrorRate(dst.Name, int(r.Hops[4].InPort), 1, clk.Now); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{dst.Name, spine.Name} {
		if err := s.f.SetPMAMisanswer(n, &sim.PMAMisanswer{NoPortSelect: true}); err != nil {
			t.Fatal(err)
		}
	}
	hc.Check(context.Background(), r)
	clk.Add(10 * time.Second)
	ph := hc.Check(context.Background(), r)
	if c := ph.Links[3].B.Counters; c.State != CountersOK || c.Err != "" || c.Increments["SymbolErrorCounter"] != 10 {
		t.Fatalf("CA answering PortSelect 0: %+v, want its own 10 symbol errors", c)
	}
	for _, e := range spineEnds(ph) {
		want := fmt.Sprintf("the PMA answered for port 0 (its PortSelect), not port %d", e.Port)
		if c := e.Counters; c.State != CountersUnavailable || !strings.Contains(c.Err, want) {
			t.Fatalf("switch answering PortSelect 0: %+v, want %q", c, want)
		}
	}
}
