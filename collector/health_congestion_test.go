package collector

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/collector/pages"
)

// TestCongestedLinkSeries: a link whose egress waits 20 % of the interval
// on VL 4 is congested (limit 5 %), stays healthy, names its VL; the
// destinations crossing it report it as their most congested link, and
// /traces names it.
func TestCongestedLinkSeries(t *testing.T) {
	e, f, dests := healthExporter(t, "health: {enabled: true, xmit_wait_limit: 0.05}\n")
	e.Stop() // traced by hand only: advancing the clock starts no scheduled trace
	e.traceAll(t, dests)
	dst := dests[len(dests)-1]
	r := e.dests.get(dst).last
	leaf := f.NodeByGUID(r.Hops[1].NodeGUID)
	// 4X QDR: 8 ns ticks (8 symbol times of 1 ns): 2.5e7 ticks a second is 20 %.
	if err := f.SetVLXmitWaitRate(leaf.Name, int(r.Hops[1].OutPort), 4, 2.5e7, e.clock.Now); err != nil {
		t.Fatal(err)
	}
	e.clock.(*fakeClock).Add(time.Hour + time.Second) // past the shared readings' interval
	e.traceAll(t, dests)
	out := scrape(t, e)
	a, b := r.Hops[1], r.Hops[2]
	ends := fmt.Sprintf(`node_guid="%s",port="%d",remote_node_guid="%s",remote_port="%d"`, a.NodeGUID, a.OutPort, b.NodeGUID, b.InPort)
	if b.NodeGUID < a.NodeGUID {
		ends = fmt.Sprintf(`node_guid="%s",port="%d",remote_node_guid="%s",remote_port="%d"`, b.NodeGUID, b.InPort, a.NodeGUID, a.OutPort)
	}
	for _, want := range []string{
		"ibtracer_link_status{" + ends + `,verdict="congested"} 1`,
		"ibtracer_link_xmit_wait_ratio{" + ends + "} 0.2",
		"ibtracer_link_xmit_wait_vl{" + ends + `,vl="4"} 1`,
		"ibtracer_link_healthy{" + ends + "} 1",
		`ibtracer_path_xmit_wait_ratio{dest="` + dst + `"} 0.2`,
		`ibtracer_path_healthy{dest="` + dst + `"} 1`,
		`ibtracer_path_degraded_links{dest="` + dst + `"} 0`,
	} {
		if !strings.Contains(out, want+"\n") {
			t.Fatalf("no %s in\n%s", want, grep(out, "xmit_wait", "link_status", "path_healthy", "degraded"))
		}
	}
	if n := strings.Count(out, `verdict="congested"`); n != 1 {
		t.Fatalf("%d congested links, want 1:\n%s", n, grep(out, `verdict="congested"`))
	}
	if n := strings.Count(out, "ibtracer_link_xmit_wait_vl{"); n != 1 {
		t.Fatalf("%d VL series, want 1 (the one link that waited)", n)
	}
	// Every destination's ratio is its path's largest: 0.2 or 0.
	crossing := 0
	for _, l := range strings.Split(grep(out, "ibtracer_path_xmit_wait_ratio{"), "\n") {
		v, _ := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
		if v != 0 && v != 0.2 {
			t.Fatalf("path ratio %s", l)
		}
		if v == 0.2 {
			crossing++
		}
	}
	if crossing == 0 || crossing == len(dests) {
		t.Fatalf("%d of %d destinations cross the congested link", crossing, len(dests))
	}

	var views []pages.TraceView
	raw, _ := json.Marshal(e.Traces())
	if err := json.Unmarshal(raw, &views); err != nil {
		t.Fatal(err)
	}
	for _, v := range views {
		if v.Name != dst {
			continue
		}
		c := v.Congestion
		if c == nil || c.Hop != 2 || !c.Congested || math.Abs(c.Ratio-0.2) > 1e-9 || c.WaitingEnd != "a" ||
			c.VL == nil || *c.VL != 4 || c.From.GUID != a.NodeGUID.String() || c.From.Port != a.OutPort || c.To.Port != b.InPort {
			t.Fatalf("/traces congestion of %s: %s", dst, raw)
		}
		return
	}
	t.Fatalf("%s not in /traces", dst)
}
