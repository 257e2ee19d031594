package collector

import (
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// degradedSeries is the link_status series of text with a verdict
// IBTracerLinkDegraded fires on.
func degradedSeries(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, "ibtracer_link_status{") || !strings.HasSuffix(l, " 1") {
			continue
		}
		for _, v := range []string{"not_active", "below_expected", "width_degraded", "speed_degraded"} {
			if strings.Contains(l, `verdict="`+v+`"`) {
				out = append(out, l)
			}
		}
	}
	return out
}

// TestSplitHostCablesAreHealthyWhenStated: on the simulator with every
// host link trained at 2X on ports that could run 4X (HDR100 hosts on
// split cables) beside 4X switch links, an exporter with the cabling
// stated per kind of link (health.host_links.expect_width: 2x,
// health.switch_links.expect_width: 4x) reports no degraded link; the
// same fabric without it reports every host link width_degraded; and a
// switch link trained at 1X is still degraded with it.
func TestSplitHostCablesAreHealthyWhenStated(t *testing.T) {
	split := &sim.LinkTraining{WidthActive: 0x10, WidthSupported: 0x13, SpeedActive: 4, SpeedSupported: 7}
	trainHosts := func(t *testing.T, f *sim.Fabric) {
		for _, n := range f.Nodes() {
			if n.IsSwitch() {
				continue
			}
			for _, p := range n.Ports[1:] {
				if p.Remote != nil {
					if err := f.SetLinkTraining(n.Name, int(p.Num), split); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	for _, tc := range []struct {
		name, health string
		wantDegraded bool
	}{
		{"could be", "health: {enabled: true, counters: false}\n", true},
		{"stated", "health: {enabled: true, counters: false, host_links: {expect_width: 2x}, switch_links: {expect_width: 4x}}\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, f, dests := healthExporter(t, tc.health)
			trainHosts(t, f)
			e.traceAll(t, dests)
			bad := degradedSeries(scrape(t, e))
			if (len(bad) > 0) != tc.wantDegraded {
				t.Fatalf("%d degraded link series, want degraded %v:\n%s", len(bad), tc.wantDegraded, strings.Join(bad, "\n"))
			}
			if tc.wantDegraded {
				for _, l := range bad {
					if !strings.Contains(l, `verdict="width_degraded"`) {
						t.Fatalf("without expectations: %s, want width_degraded", l)
					}
				}
				return
			}
			// A switch link at 1X among them is still degraded.
			r := e.dests.get(dests[len(dests)-1]).last
			leaf := f.NodeByGUID(r.Hops[1].NodeGUID)
			if err := f.SetLinkWidth(leaf.Name, int(r.Hops[1].OutPort), true); err != nil {
				t.Fatal(err)
			}
			e.freshTracer() // a fresh health checker: no shared readings
			e.traceAll(t, dests)
			bad = degradedSeries(scrape(t, e))
			if len(bad) != 1 || !strings.Contains(bad[0], `verdict="below_expected"`) {
				t.Fatalf("a 1X switch link: %d degraded series, want it alone below_expected:\n%s", len(bad), strings.Join(bad, "\n"))
			}
		})
	}
}
