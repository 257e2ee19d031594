package linkhealth

import (
	"context"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// splitHostCables trains both host links of r's path (the first and the
// last) at 2X on ports that support 4X and 2X, as an HDR100 host on a
// split cable does.
func splitHostCables(t *testing.T, s *fixture, first, last *sim.Node, firstPort, lastPort int) {
	t.Helper()
	tr := &sim.LinkTraining{WidthActive: 0x10, WidthSupported: 0x10 | 0x02 | 0x01, SpeedActive: 4, SpeedSupported: 7}
	for _, p := range []struct {
		n    *sim.Node
		port int
	}{{first, firstPort}, {last, lastPort}} {
		if err := s.f.SetLinkTraining(p.n.Name, p.port, tr); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHealthJudgesBySiteCabling: host links on split cables train at 2X
// on ports that could run 4X, beside 4X switch links. By iblinkinfo's
// "could be" both host links are width_degraded; with the cabling stated
// per kind of link (host links 2X, switch links 4X) the path is healthy;
// a switch link, or a host link, that trains at 1X is still degraded
// (below_expected); a general expect_width of 4X without the host links'
// own makes the 2X host links below_expected.
func TestHealthJudgesBySiteCabling(t *testing.T) {
	s := newFixture(t)
	r := s.trace(s.lid("H1-2"))
	if r.PathHops() != 4 {
		t.Fatalf("trace: %d hops, want 4", r.PathHops())
	}
	src, dst := s.f.NodeByGUID(r.Hops[0].NodeGUID), s.f.NodeByGUID(r.Hops[4].NodeGUID)
	splitHostCables(t, s, src, dst, int(r.Hops[0].OutPort), int(r.Hops[4].InPort))
	check := func(o Options) *PathHealth { return NewChecker(s.tr, o).Check(context.Background(), r) }

	ph := check(Options{})
	if ph.DegradedLinks != 2 || ph.Links[0].Verdict != LinkWidthDegraded || ph.Links[3].Verdict != LinkWidthDegraded ||
		ph.Links[0].Width != 2 || ph.Links[0].CouldBeWidth != 4 {
		t.Fatalf("no expectation: %d degraded, links %s %s (width %d could be %d); want both host links width_degraded",
			ph.DegradedLinks, ph.Links[0].Verdict, ph.Links[3].Verdict, ph.Links[0].Width, ph.Links[0].CouldBeWidth)
	}

	site := Options{HostLinks: Expect{Width: 2}, SwitchLinks: Expect{Width: 4}, ExpectSpeed: SpeedQDR}
	ph = check(site)
	if !ph.Healthy || ph.DegradedLinks != 0 {
		t.Fatalf("site cabling stated: healthy %v, %d degraded: %v", ph.Healthy, ph.DegradedLinks, ph.Unhealthy())
	}
	for _, l := range ph.Links {
		kind, width := KindSwitch, 4
		if l.Hop == 1 || l.Hop == 4 {
			kind, width = KindHost, 2
		}
		if l.Kind != kind || l.ExpectWidth != width || l.ExpectSpeed != SpeedQDR || l.Verdict != LinkOK {
			t.Fatalf("link %d: kind %s expect %dX %s, verdict %s; want %s, %dX QDR, ok", l.Hop, l.Kind, l.ExpectWidth, l.ExpectSpeed, l.Verdict, kind, width)
		}
	}

	ph = check(Options{ExpectWidth: 4})
	if ph.DegradedLinks != 2 || ph.Links[0].Verdict != LinkBelowExpected || ph.Links[3].Verdict != LinkBelowExpected {
		t.Fatalf("expect_width 4x for every link: %d degraded (%s, %s), want the 2X host links below_expected",
			ph.DegradedLinks, ph.Links[0].Verdict, ph.Links[3].Verdict)
	}

	leaf := s.f.NodeByGUID(r.Hops[1].NodeGUID)
	if err := s.f.SetLinkWidth(leaf.Name, int(r.Hops[1].OutPort), true); err != nil { // a switch link at 1X
		t.Fatal(err)
	}
	ph = check(site)
	if ph.Healthy || ph.DegradedLinks != 1 || ph.Links[1].Verdict != LinkBelowExpected {
		t.Fatalf("a 1X switch link: healthy %v, %d degraded, link 2 %s; want it below_expected", ph.Healthy, ph.DegradedLinks, ph.Links[1].Verdict)
	}
	if err := s.f.SetLinkTraining(dst.Name, int(r.Hops[4].InPort), &sim.LinkTraining{WidthActive: 1, WidthSupported: 0x13, SpeedActive: 4, SpeedSupported: 7}); err != nil {
		t.Fatal(err)
	}
	ph = check(site)
	if ph.DegradedLinks != 2 || ph.Links[3].Verdict != LinkBelowExpected {
		t.Fatalf("a 1X host link: %d degraded, link 4 %s; want it below_expected too", ph.DegradedLinks, ph.Links[3].Verdict)
	}
}
