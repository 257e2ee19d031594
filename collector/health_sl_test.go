package collector

import (
	"strconv"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// qosFatTree is a fat tree of 2 leaves, 2 spines and 3 hosts a leaf, with
// the vendor agent on every node but H0-0, the SM's node, where the
// exporters attach (so that their SA queries, on the SM's SL 0, cross no
// link). With QoS: the PathRecord to H1-2 gives SL 5 and no VL serves
// SL 0, the SL of a configuration without sl: (the switches drop GMPs on
// it).
func qosFatTree(t *testing.T) *sim.Fabric {
	t.Helper()
	topo, _ := sim.FatTree2(2, 2, 3, 1)
	f, err := sim.New(topo, sim.Options{SMNode: "H0-0"})
	if err != nil {
		t.Fatal(err)
	}
	agentsBut(t, f, "H0-0") // health_test.go
	f.SetPathQoS(f.Node("H1-2").Ports[1].GUID, sim.PathQoS{SL: 5})
	f.SetSLUnusable(0, true)
	return f
}

// qosExporter is an exporter at H0-0 of f tracing the one destination
// dest (a YAML flow mapping), health and counters on, whose trace must
// succeed on SL sl; it returns the link_counters_state series.
func qosExporter(t *testing.T, f *sim.Fabric, dest string, sl uint8) string {
	t.Helper()
	e := simExporterAt(t, f, "H0-0", // health_test.go
		"interval: 1h\ntimeout: 100ms\nretries: 0\nhealth: {enabled: true, counters: true}\ndestinations:\n  - "+dest+"\n")
	e.traceAll(t, []string{"far"})
	r := e.dests.get("far").last
	if r.PathHops() != 4 || r.Addressing == nil || r.Addressing.SL != sl {
		t.Fatalf("%s: %d hops, addressing %+v; want 4 hops, SL %d", dest, r.PathHops(), r.Addressing, sl)
	}
	return grep(scrape(t, e), "ibtracer_link_counters_state{")
}

// TestHealthCountersOnThePathSL: a guid: destination's trace takes its
// PathRecord's SL 5, and so do its links' PerfMgt reads: every link of
// its path has its counters read (state first). A lid: destination to
// the same port has no PathRecord: its reads go on SL 0, which the fabric
// drops, and its links' counters are unavailable.
func TestHealthCountersOnThePathSL(t *testing.T) {
	f := qosFatTree(t)
	dst := f.Node("H1-2").Ports[1]
	lid, _ := f.LIDOf("H1-2", 1)
	byLID := qosExporter(t, f, "{name: far, lid: "+strconv.Itoa(int(lid))+"}", 0)
	if n := strings.Count(byLID, `state="unavailable"} 1`); n != 4 {
		t.Fatalf("lid: destination, SL 0 dropped: %d links unavailable, want 4:\n%s", n, byLID)
	}
	byGUID := qosExporter(t, f, "{name: far, guid: "+dst.GUID.String()+"}", 5)
	if n := strings.Count(byGUID, `state="first"} 1`); n != 4 || strings.Contains(byGUID, `state="unavailable"} 1`) {
		t.Fatalf("guid: destination, path SL 5: %d links read, want all 4:\n%s", n, byGUID)
	}
}
