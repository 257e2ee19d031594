package collector

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/plan"
)

// planSeries gathers e's plan series: the link_plan_status series as
// "NODE[PORT] -> REMOTE[PORT] status want remote_want", sorted, and
// plan_links by status.
func planSeries(t *testing.T, e *Exporter) (links []string, counts map[string]float64, notCrossed float64) {
	t.Helper()
	counts = map[string]float64{}
	notCrossed = -1
	for _, mf := range families(t, e) {
		for _, m := range mf.GetMetric() {
			lv := map[string]string{}
			for _, l := range m.GetLabel() {
				lv[l.GetName()] = l.GetValue()
			}
			switch mf.GetName() {
			case "ibtracer_link_plan_status":
				links = append(links, lv["node_name"]+"["+lv["port"]+"] -> "+lv["remote_node_name"]+"["+lv["remote_port"]+"] "+
					lv["status"]+" want "+lv["want"]+" remote_want "+lv["remote_want"])
			case "ibtracer_plan_links":
				counts[lv["status"]] = m.GetGauge().GetValue()
			case "ibtracer_plan_links_not_crossed":
				notCrossed = m.GetGauge().GetValue()
			}
		}
	}
	sort.Strings(links)
	return links, counts, notCrossed
}

// writePlan writes the links e's last paths cross as a plan file.
func writePlan(t *testing.T, e *Exporter) string {
	t.Helper()
	var found []plan.Found
	for _, l := range pathLinks(e.destinations(), nil) {
		found = append(found, l.found)
	}
	f := filepath.Join(t.TempDir(), "plan.net")
	var b strings.Builder
	if err := plan.WriteIBNetDiscover(&b, found); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestPlanSeries: against the plan taken from the same fabric, every
// link is planned and no link_plan_status series exists; with L1's two
// spine cables swapped, each is one series, miswired, naming where both
// ends should go; a 1X link is below_plan.
func TestPlanSeries(t *testing.T) {
	e, _, dests := healthExporter(t, "health: {enabled: true}\n")
	e.traceAll(t, dests)
	planFile := writePlan(t, e)

	e, f, dests := healthExporter(t, "health: {enabled: true}\nplan: "+planFile+"\n")
	e.traceAll(t, dests)
	links, counts, notCrossed := planSeries(t, e)
	if len(links) != 0 || counts[plan.Planned] == 0 || counts[plan.Miswired]+counts[plan.BelowPlan]+counts[plan.NotInPlan] != 0 || notCrossed != 0 {
		t.Fatalf("as planned: %v %v %v", links, counts, notCrossed)
	}
	if err := f.SetLinkWidth("H0-0", 1, true); err != nil {
		t.Fatal(err)
	}
	e.freshTracer()
	e.traceAll(t, dests)
	if links, _, _ = planSeries(t, e); len(links) != 1 || links[0] != "H0-0[1] -> L0[1] below_plan want  remote_want " {
		t.Fatalf("1X: %q", links)
	}

	swapped := func(topo *sim.Topology) {
		l1 := topo.Node("L1")
		l1.Links[4], l1.Links[5] = l1.Links[5], l1.Links[4]
		topo.Node("S1").Links[2].Port, topo.Node("S0").Links[2].Port = 4, 5
	}
	e, _, dests = fatTreeExporterOf(t, "health: {enabled: true}\nplan: "+planFile+"\n", 1, swapped)
	e.traceAll(t, dests)
	links, counts, _ = planSeries(t, e)
	if counts[plan.Miswired] != 2 || len(links) != 2 ||
		links[0] != `S0[2] -> L1[5] miswired want "L1"[4] remote_want "S1"[2]` ||
		links[1] != `S1[2] -> L1[4] miswired want "L1"[5] remote_want "S0"[2]` {
		t.Fatalf("swapped: %q %v", links, counts)
	}
}
