package collector

import (
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/localize"
)

// linkInfo gathers e's ibtracer_link_info series: link to its two ends'
// node descriptions.
func linkInfo(t *testing.T, e *Exporter) map[localize.Link][2]string {
	t.Helper()
	mfs := families(t, e)
	out := map[localize.Link][2]string{}
	for _, mf := range mfs {
		if mf.GetName() != "ibtracer_link_info" {
			continue
		}
		for _, m := range mf.GetMetric() {
			lv := map[string]string{}
			for _, l := range m.GetLabel() {
				lv[l.GetName()] = l.GetValue()
			}
			if m.GetGauge().GetValue() != 1 {
				t.Fatalf("link_info %v = %v", lv, m.GetGauge().GetValue())
			}
			a, _ := ibmad.ParseGUID(lv["node_guid"])
			b, _ := ibmad.ParseGUID(lv["remote_node_guid"])
			var ap, bp int
			for _, c := range []struct {
				s string
				p *int
			}{{lv["port"], &ap}, {lv["remote_port"], &bp}} {
				for _, r := range c.s {
					*c.p = *c.p*10 + int(r-'0')
				}
			}
			out[localize.Link{NodeGUID: a, Port: uint8(ap), RemoteNodeGUID: b, RemotePort: uint8(bp)}] = [2]string{lv["node_desc"], lv["remote_node_desc"]}
		}
	}
	return out
}

// wantDescs checks that info names exactly the links of want, each end
// by the simulated node's description (as cleaned for labels).
func wantDescs(t *testing.T, f *sim.Fabric, info map[localize.Link][2]string, want map[localize.Link]float64, clean map[string]string) {
	t.Helper()
	if len(info) != len(want) {
		t.Fatalf("link_info for %d links %v, want the %d links %v", len(info), info, len(want), want)
	}
	desc := func(g ibmad.GUID) string {
		d := f.NodeByGUID(g).Desc
		if c, ok := clean[d]; ok {
			return c
		}
		return d
	}
	for l := range want {
		got, ok := info[l]
		if !ok {
			t.Fatalf("no link_info for %v", l)
		}
		if w := [2]string{desc(l.NodeGUID), desc(l.RemoteNodeGUID)}; got != w {
			t.Errorf("link_info %v: node descriptions %q, want %q", l, got, w)
		}
	}
}

// TestLinkInfoNamesTheEvidenceLinks: ibtracer_link_info names both ends
// of every link that carries evidence, by node description, so that the
// alerts name them without hop_info (absent for discovered destinations,
// and for hop 0, the exporter's own node); no link_info on a healthy
// fabric. A description with a control character is cleaned
// (internal/fabricstr) as every string from the fabric.
func TestLinkInfoNamesTheEvidenceLinks(t *testing.T) {
	clean := map[string]string{}
	e, f, dests := fatTreeExporterOf(t, evidenceYAML, 1, func(topo *sim.Topology) {
		for _, n := range topo.Nodes {
			if n.Type == ibmad.NodeTypeSwitch {
				n.Desc = n.Name + "\x07 switch"
				clean[n.Desc] = n.Name + "  switch"
			}
		}
	})
	e.traceAll(t, dests)
	if info := linkInfo(t, e); len(info) != 0 {
		t.Fatalf("healthy fabric: link_info %v", info)
	}
	spine, port, _ := spineDown(t, e, f, dests)
	if err := f.SetLinkState(spine, port, false, false); err != nil {
		t.Fatal(err)
	}
	e.traceEach(dests)
	links, _ := linkSeries(t, e)
	if len(links["ibtracer_link_suspicion"]) == 0 {
		t.Fatal("no link evidence")
	}
	wantDescs(t, f, linkInfo(t, e), links["ibtracer_link_suspicion"], clean)
}

// TestLinkInfoNamesTheSourcesLink: the link from the exporter's own node
// (hop 0, never in hop_info) trained at 1X is unhealthy: link_info names
// its ends, the source's own description among them, with the evidence
// off (the health series alone) and with it on.
func TestLinkInfoNamesTheSourcesLink(t *testing.T) {
	for _, yml := range []string{"health: {enabled: true}\n", "health: {enabled: true}\n" + evidenceYAML} {
		e, f, dests := healthExporter(t, yml)
		if err := f.SetLinkWidth("H0-0", 1, true); err != nil {
			t.Fatal(err)
		}
		e.traceAll(t, dests)
		src := simLink(t, f, "H0-0", 1)
		wantDescs(t, f, linkInfo(t, e), map[localize.Link]float64{src: 1}, nil)
	}
}

// linkInfoText counts the ibtracer_link_info series of a scrape and
// their bytes in the text exposition.
func linkInfoText(t *testing.T, e *Exporter) (n, bytes int) {
	t.Helper()
	_, _, text := seriesCount(t, e)
	for _, l := range strings.Split(string(text), "\n") {
		if strings.HasPrefix(l, "ibtracer_link_info") {
			bytes += len(l) + 1
			if strings.HasPrefix(l, "ibtracer_link_info{") {
				n++
			}
		}
	}
	return n, bytes
}
