package collector

import (
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// TestHealthPMAMisanswerIsUnavailable: spines whose PMA answers
// PortCountersExtended with PortCounters (another attribute) give every
// link with a spine end the counter state unavailable, the worse end's,
// and the links without one their first reading: an answer for another
// attribute is counted, never read as the port's counters.
func TestHealthPMAMisanswerIsUnavailable(t *testing.T) {
	e, f, dests := healthExporter(t, "health: {enabled: true, counters: true}\n")
	spines := map[string]bool{}
	for _, n := range f.Nodes() {
		if strings.HasPrefix(n.Name, "S") {
			spines[n.GUID.String()] = true
			if err := f.SetPMAMisanswer(n.Name, &sim.PMAMisanswer{Attrs: map[ibmad.AttrID]ibmad.AttrID{
				ibmad.AttrPortCountersExtended: ibmad.AttrPortCounters}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	e.traceAll(t, dests)
	states := grep(scrape(t, e), "ibtracer_link_counters_state{")
	unavailable, first := 0, 0
	for _, l := range strings.Split(states, "\n") {
		atSpine := false
		for g := range spines {
			atSpine = atSpine || strings.Contains(l, `node_guid="`+g+`"`)
		}
		switch {
		case atSpine && strings.HasSuffix(l, `state="unavailable"} 1`):
			unavailable++
		case !atSpine && strings.HasSuffix(l, `state="first"} 1`):
			first++
		default:
			t.Errorf("link at a spine %v: %s", atSpine, l)
		}
	}
	if unavailable == 0 || first == 0 {
		t.Fatalf("%d links at a spine unavailable, %d others first:\n%s", unavailable, first, states)
	}
}
