package collector

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ibtracer/ibtracer_exporter/agent"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// healthExporter is an exporter on a sim fat tree whose destinations are
// traced by hand (a fake clock holds the scheduler).
func healthExporter(t *testing.T, healthYAML string) (*Exporter, *sim.Fabric, []string) {
	t.Helper()
	return fatTreeExporter(t, healthYAML, 1)
}

// fatTreeExporter is healthExporter's on a fat tree of 2 leaves, 2
// spines and 3 hosts a leaf with parallel links between each leaf and
// spine, the configuration yml before its destinations.
func fatTreeExporter(t *testing.T, yml string, parallel int) (*Exporter, *sim.Fabric, []string) {
	t.Helper()
	return fatTreeExporterOf(t, yml, parallel, nil)
}

// fatTreeExporterOf is fatTreeExporter's, with edit (if not nil) applied
// to the topology before the fabric starts.
func fatTreeExporterOf(t *testing.T, yml string, parallel int, edit func(*sim.Topology)) (*Exporter, *sim.Fabric, []string) {
	t.Helper()
	topo, _ := sim.FatTree2(2, 2, 3, parallel)
	if edit != nil {
		edit(topo)
	}
	f, err := sim.New(topo, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var dests []string
	yml = "interval: 1h\n" + yml + "destinations:\n"
	agentsBut(t, f, "H0-0")
	for _, n := range f.Nodes() {
		if n.Name != "H0-0" && !n.IsSwitch() {
			lid, _ := f.LIDOf(n.Name, 0)
			yml += "  - {name: " + n.Name + ", lid: " + strconv.Itoa(int(lid)) + "}\n"
			dests = append(dests, n.Name)
		}
	}
	return simExporterAt(t, f, "H0-0", yml), f, dests
}

// simExporterAt is an exporter on node of f with the configuration yml,
// on a fake clock (its loops wait: traceAll traces by hand), stopped
// when t ends.
func simExporterAt(t *testing.T, f *sim.Fabric, node, yml string) *Exporter {
	t.Helper()
	tr, _ := f.Attach(node, 0)
	eng := ibmad.NewEngine(tr, ibmad.Options{})
	t.Cleanup(func() { eng.Close() })
	e := New(log.NewNopLogger(), "x")
	e.clock = newFakeClock(time.Unix(1_800_000_000, 0))
	t.Cleanup(e.Stop)
	e.SetDevice(eng, nil, nil)
	e.Apply(mustConfig(t, yml))
	return e
}

func (e *Exporter) traceAll(t *testing.T, names []string) {
	t.Helper()
	for _, n := range names {
		e.traceOnce(context.Background(), e.dests.get(n), time.Minute)
		if r := e.dests.get(n).last; r == nil || r.Status != trace.StatusOK {
			t.Fatalf("%s: %+v", n, r)
		}
	}
}

func TestHealthSeriesOncePerLink(t *testing.T) {
	e, f, dests := healthExporter(t, "health: {enabled: true, expect_width: 4x, limits: {SymbolErrorCounter: 5}}\n")
	e.traceAll(t, dests)
	hops, ports := 0, map[string]bool{}
	for _, n := range dests {
		r := e.dests.get(n).last
		hops += r.PathHops()
		for i := 1; i < len(r.Hops); i++ {
			ports[r.Hops[i-1].NodeGUID.String()+"/"+strconv.Itoa(int(r.Hops[i-1].OutPort))] = true
			ports[r.Hops[i].NodeGUID.String()+"/"+strconv.Itoa(int(r.Hops[i].InPort))] = true
		}
	}
	links := testutil.CollectAndCount(e, "ibtracer_link_healthy")
	if links != len(ports)/2 || links >= hops {
		t.Fatalf("%d link series for %d distinct ports and %d hops summed over destinations", links, len(ports), hops)
	}
	if n := testutil.CollectAndCount(e, "ibtracer_path_healthy"); n != len(dests) {
		t.Fatalf("%d path_healthy series for %d destinations", n, len(dests))
	}
	// Cost: at most one PortInfo and one PortCounters per distinct port,
	// plus a PMA ClassPortInfo per node, and a switch's port 0 PortInfo.
	mads := e.healthMADs()
	if limit := uint64(2*len(ports) + 2*len(f.Nodes())); mads > limit {
		t.Fatalf("health spent %d MADs for %d ports; want at most %d", mads, len(ports), limit)
	}

	// A 1X link on some paths (below the expected 4X): those destinations are unhealthy, the
	// others are not, and the link says why.
	r := e.dests.get(dests[len(dests)-1]).last
	leaf := f.NodeByGUID(r.Hops[1].NodeGUID)
	if err := f.SetLinkWidth(leaf.Name, int(r.Hops[1].OutPort), true); err != nil {
		t.Fatal(err)
	}
	e.freshTracer() // a fresh health checker: no shared readings
	e.traceAll(t, dests)
	out := scrape(t, e)
	if !strings.Contains(out, `verdict="below_expected"`) || !strings.Contains(out, `ibtracer_path_healthy{dest="`+dests[len(dests)-1]+`"} 0`) {
		t.Fatalf("no degraded link:\n%s", grep(out, "path_healthy", "link_status"))
	}
	if !strings.Contains(out, `ibtracer_link_width_lanes{node_guid=`) || !strings.Contains(out, "} 1\n") {
		t.Fatalf("no 1X link:\n%s", grep(out, "link_width"))
	}
	healthy := strings.Count(out, "ibtracer_path_healthy{") - strings.Count(grep(out, "ibtracer_path_healthy{"), "} 0")
	if healthy == 0 {
		t.Fatalf("every destination unhealthy: %s", grep(out, "path_healthy"))
	}
}

func TestHealthOffEmitsNothing(t *testing.T) {
	e, _, dests := healthExporter(t, "")
	e.traceAll(t, dests[:1])
	if n := testutil.CollectAndCount(e, "ibtracer_link_healthy", "ibtracer_path_healthy", "ibtracer_health_mads_total"); n != 0 {
		t.Fatalf("%d health series with health off", n)
	}
}

func scrape(t *testing.T, e *Exporter) string {
	t.Helper()
	reg := NewRegistry(e)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, mf := range mfs {
		for _, m := range mf.Metric {
			b.WriteString(mf.GetName() + "{")
			for i, l := range m.Label {
				if i > 0 {
					b.WriteString(",")
				}
				b.WriteString(l.GetName() + "=\"" + l.GetValue() + "\"")
			}
			v := m.GetGauge().GetValue() + m.GetCounter().GetValue()
			b.WriteString("} " + strconv.FormatFloat(v, 'g', -1, 64) + "\n")
		}
	}
	return b.String()
}

func grep(s string, words ...string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		for _, w := range words {
			if strings.Contains(l, w) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

// health: takes effect on reload (internal/service/doc.go).
func TestHealthReload(t *testing.T) {
	e, _, dests := healthExporter(t, "")
	if e.healthChecker() != nil {
		t.Fatal("health on without health:")
	}
	c := *e.config()
	c2 := mustConfig(t, "interval: 1h\nhealth: {enabled: true}\ndestinations: [{name: "+dests[0]+", lid: "+
		strconv.Itoa(int(e.dests.get(dests[0]).cfg.LID))+"}]\n")
	e.Apply(c2)
	e.traceAll(t, dests[:1])
	if n := testutil.CollectAndCount(e, "ibtracer_path_healthy"); e.healthChecker() == nil || n != 1 {
		t.Fatalf("after a reload turning health on: %d path_healthy series", n)
	}
	e.Apply(&c)
	if n := testutil.CollectAndCount(e, "ibtracer_path_healthy", "ibtracer_link_healthy"); e.healthChecker() != nil || n != 0 {
		t.Fatalf("after a reload turning health off: %d health series", n)
	}
	// Turned on again: what the destination's trace found before health
	// went off is not shown as its health now; its next trace is.
	e.Apply(c2)
	if n := testutil.CollectAndCount(e, "ibtracer_path_healthy", "ibtracer_link_healthy"); e.healthChecker() == nil || n != 0 {
		t.Fatalf("after a reload turning health on again, before a trace: %d health series, want 0", n)
	}
	e.traceAll(t, dests[:1])
	if n := testutil.CollectAndCount(e, "ibtracer_path_healthy"); n != 1 {
		t.Fatalf("after a reload turning health on again and a trace: %d path_healthy series, want 1", n)
	}
}

// A destination's path health goes with it: a reload that removes
// destinations removes their health series, and keeps the others'.
func TestHealthGoesWithItsDestination(t *testing.T) {
	e, _, dests := healthExporter(t, "health: {enabled: true}\n")
	e.traceAll(t, dests)
	if n := testutil.CollectAndCount(e, "ibtracer_path_healthy"); n != len(dests) {
		t.Fatalf("%d path_healthy series, want %d", n, len(dests))
	}
	e.Apply(mustConfig(t, "interval: 1h\nhealth: {enabled: true}\ndestinations: [{name: "+dests[0]+", lid: "+
		strconv.Itoa(int(e.dests.get(dests[0]).cfg.LID))+"}]\n"))
	out := scrape(t, e)
	if n := strings.Count(out, "ibtracer_path_healthy{"); n != 1 || !strings.Contains(out, `ibtracer_path_healthy{dest="`+dests[0]+`"}`) {
		t.Fatalf("after a reload keeping %s alone: %d path_healthy series:\n%s", dests[0], n, grep(out, "path_healthy"))
	}
}

// The health series pass promtool's lint (base units: a rate is in bytes
// per second) and carry the rate in that unit: 4X QDR is 40 Gb/s, 5e9
// bytes per second.
func TestHealthSeriesLintAndUnits(t *testing.T) {
	e, _, dests := healthExporter(t, "health: {enabled: true, counters: true}\n")
	e.traceAll(t, dests)
	_, _, text := seriesCount(t, e)
	promtoolCheck(t, text)
	out := string(text)
	for _, want := range []string{
		`ibtracer_path_rate_bytes_per_second{dest="` + dests[0] + `"} 5e+09`,
		`ibtracer_link_rate_bytes_per_second{`,
		`ibtracer_link_capable_rate_bytes_per_second{`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s in the scrape:\n%s", want, grep(out, "rate"))
		}
	}
}

// agentsBut runs the vendor agent on every node of f but skip (the
// exporter's), each on an engine of its own, stopped when t ends.
func agentsBut(t *testing.T, f *sim.Fabric, skip string) {
	t.Helper()
	for _, n := range f.Nodes() {
		if n.Name == skip {
			continue
		}
		tr, _ := f.Attach(n.Name, 0)
		ae := ibmad.NewEngine(tr, ibmad.Options{})
		t.Cleanup(func() { ae.Close() })
		if _, err := agent.New(ae, agent.Config{}); err != nil {
			t.Fatal(err)
		}
	}
}
