package collector

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibtracer/ibtracer_exporter/collector/config"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/internal/syncbuf"
	"github.com/ibtracer/ibtracer_exporter/localize"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// lftPath is the path from CA src to LID dlid as the switches' tables
// route it, as the walk would find it (no MAD sent): hops with their
// ports. A switch whose port toward the next hop is down ends it.
func lftPath(f *sim.Fabric, lfts map[string][]uint8, src string, dlid uint16) []trace.Hop {
	n := f.Node(src)
	hops := []trace.Hop{{NodeGUID: n.GUID, NodeType: n.Type, OutPort: 1, Agent: trace.AgentSource}}
	p := n.Ports[1]
	for len(hops) < 64 {
		in := p.Remote
		if in == nil {
			return hops
		}
		h := trace.Hop{Hop: len(hops), NodeGUID: in.Node.GUID, NodeType: in.Node.Type, InPort: in.Num,
			Agent: trace.AgentValidated, ValidatedBy: trace.ByAgent, AgentRTT: 5 * time.Microsecond}
		if !in.Node.IsSwitch() {
			return append(hops, h)
		}
		h.OutPort = lfts[in.Node.Name][dlid]
		hops = append(hops, h)
		p = in.Node.Ports[h.OutPort]
		if p.State != ibmad.PortStateActive { // the walk stops: port down
			return hops
		}
	}
	return hops
}

// evidenceScale is an exporter with evidence on and n destinations, every
// CA but src's (hop series off), on fabric f; each destination traced as
// the tables route it (lftPath), recorded and observed as traceOnce does.
func evidenceScale(t *testing.T, f *sim.Fabric, src string, n int) (*Exporter, []string, map[string]uint16, string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("interval: 1m\nevidence: {enabled: true}\ndestinations:\n")
	var names []string
	lids := map[string]uint16{}
	for _, node := range f.Nodes() {
		if node.IsSwitch() || node.Name == src || len(names) == n {
			continue
		}
		lid, _ := f.LIDOf(node.Name, 0)
		fmt.Fprintf(&b, "  - {name: %s, lid: %d, hops: false}\n", node.Name, lid)
		names = append(names, node.Name)
		lids[node.Name] = lid
	}
	if len(names) != n {
		t.Fatalf("%d CAs besides %s, want %d", len(names), src, n)
	}
	e := New(log.NewNopLogger(), "")
	t.Cleanup(e.Stop)
	e.Apply(mustConfig(t, b.String()))
	return e, names, lids, b.String()
}

// traceByTables records one trace of every destination, as the tables
// route it now.
func traceByTables(e *Exporter, f *sim.Fabric, src string, names []string, lids map[string]uint16, at time.Time) {
	lfts := map[string][]uint8{}
	for _, node := range f.Nodes() {
		if node.IsSwitch() {
			lfts[node.Name] = f.LFT(node.Name)
		}
	}
	for _, name := range names {
		r := &trace.Result{Status: trace.StatusOK, Start: at, Duration: time.Millisecond, MADs: 1,
			Hops: lftPath(f, lfts, src, lids[name])}
		if last := r.Hops[len(r.Hops)-1]; last.NodeType == ibmad.NodeTypeSwitch {
			r.Status, r.Reason = trace.StatusUnreachable, trace.ReasonPortDown
		}
		s := e.dests.get(name)
		s.record(r)
		s.observe(r)
	}
}

// distinctLinks counts the links the destinations' last and previous
// paths cross, from their hops (not through localize).
func distinctLinks(e *Exporter, names []string) (links, moved int) {
	seen := map[string]bool{}
	add := func(r *trace.Result) {
		for i := 1; r != nil && i < len(r.Hops); i++ {
			a := fmt.Sprintf("%s/%d", r.Hops[i-1].NodeGUID, r.Hops[i-1].OutPort)
			b := fmt.Sprintf("%s/%d", r.Hops[i].NodeGUID, r.Hops[i].InPort)
			if b < a {
				a, b = b, a
			}
			seen[a+" "+b] = true
		}
	}
	for _, n := range names {
		s := e.dests.get(n)
		add(s.last)
		if prev := s.previousPath(s.last); prev != nil {
			add(prev)
			moved++
		}
	}
	return len(seen), moved
}

// evidenceSeries counts the scrape's evidence series and its size.
func evidenceSeries(t *testing.T, e *Exporter) (paths, bad, suspicion, fixed, bytes, evBytes int, cpu time.Duration) {
	t.Helper()
	c0 := cpuTime()
	_, _, text := seriesCount(t, e)
	cpu = cpuTime() - c0
	for _, l := range strings.Split(string(text), "\n") {
		if strings.HasPrefix(l, "ibtracer_link_paths") || strings.HasPrefix(l, "ibtracer_link_bad_paths") ||
			strings.HasPrefix(l, "ibtracer_link_suspicion") || strings.HasPrefix(l, "ibtracer_evidence_") {
			evBytes += len(l) + 1
		}
		switch {
		case strings.HasPrefix(l, "ibtracer_link_paths{"):
			paths++
		case strings.HasPrefix(l, "ibtracer_link_bad_paths{"):
			bad++
		case strings.HasPrefix(l, "ibtracer_link_suspicion{"):
			suspicion++
		case strings.HasPrefix(l, "ibtracer_evidence_"):
			fixed++
		}
	}
	return paths, bad, suspicion, fixed, len(text), evBytes, cpu
}

// checkEvidenceBudget: the three link series only on the links a bad
// path names (none without a fault), and eight fixed series; logged, with
// the links the paths cross (the bound), for the series budget
// (docs/metrics.md).
func checkEvidenceBudget(t *testing.T, leaves, spines, hosts, n int) {
	f := fatTree(t, leaves, spines, hosts) // exporter_fabric_test.go
	const src = "H0-0"
	e, names, lids, yml := evidenceScale(t, f, src, n)
	at := time.Unix(1_800_000_000, 0)
	check := func(what string, want []localize.Link) {
		t.Helper()
		paths, bad, sus, fixed, size, evBytes, cpu := evidenceSeries(t, e)
		c0 := cpuTime()
		ch := make(chan prometheus.Metric, 1024)
		go func() { e.evidence.collect(ch, e.logger, e.st.load(), e.destinations()); close(ch) }()
		for range ch {
		}
		evCPU := cpuTime() - c0
		links, moved := distinctLinks(e, names)
		t.Logf("%d destinations (%d with a previous path), %s: paths cross %d links; %d link_paths, %d link_bad_paths, "+
			"%d link_suspicion, %d fixed (%d bytes); /metrics %d bytes, scrape CPU %v, of which the evidence %v",
			n, moved, what, links, paths, bad, sus, fixed, evBytes, size, cpu.Round(time.Millisecond), evCPU.Round(time.Millisecond))
		if paths != len(want) || bad != len(want) || sus != len(want) || fixed != 3+len(evidenceCauses()) {
			t.Fatalf("%s: %d link_paths, %d bad, %d suspicion, %d fixed; want %d, %d, %d, 8", what, paths, bad, sus, fixed,
				len(want), len(want), len(want))
		}
		// link_info: one per link the evidence names (no health check here).
		if info, infoBytes := linkInfoText(t, e); info != len(want) {
			t.Fatalf("%s: %d link_info, want %d", what, info, len(want))
		} else {
			t.Logf("%s: %d link_info (%d bytes)", what, info, infoBytes)
		}
		if n <= 1000 { // promtool on the small fabric's scrape (the large one's is 11 MB)
			_, _, text := seriesCount(t, e)
			promtoolCheck(t, text)
		}
		got, _ := linkSeries(t, e)
		for _, l := range want {
			if got["ibtracer_link_bad_paths"][l] == 0 {
				t.Fatalf("%s: no bad paths on %v: %v", what, l, got["ibtracer_link_bad_paths"])
			}
		}
	}
	traceByTables(e, f, src, names, lids, at)
	check("one path each, no fault", nil)
	// A spine's link to another leaf dies and the SM routes around it:
	// the destinations behind it change paths and keep the previous.
	if err := f.SetLinkState("S0", 2, false, true); err != nil {
		t.Fatal(err)
	}
	traceByTables(e, f, src, names, lids, at.Add(time.Minute))
	check("after a reroute (previous paths kept)", nil)
	// Another spine link dies before the SM sweeps: the paths over it
	// fail there, and name it.
	if err := f.SetLinkState("S1", 3, false, false); err != nil {
		t.Fatal(err)
	}
	traceByTables(e, f, src, names, lids, at.Add(2*time.Minute))
	check("a dead link before the sweep", []localize.Link{simLink(t, f, "S1", 3)})
	// The bound: the link back, every path bad (a latency threshold below
	// every round trip) names every link the paths cross.
	if err := f.SetLinkState("S1", 3, true, false); err != nil {
		t.Fatal(err)
	}
	traceByTables(e, f, src, names, lids, at.Add(3*time.Minute))
	e.Apply(mustConfig(t, strings.Replace(yml, "evidence: {enabled: true}", "evidence: {enabled: true, latency_threshold: 1us, max_links: 1000000}", 1)))
	all := map[localize.Link]bool{} // a slow path names its current links, not its previous ones
	for _, name := range names {
		for _, l := range localize.PathLinks(e.dests.get(name).last) {
			all[l] = true
		}
	}
	want := make([]localize.Link, 0, len(all))
	for l := range all {
		want = append(want, l)
	}
	check("every path bad (the bound)", want)
	// The same under the default max_links.
	e.Apply(mustConfig(t, strings.Replace(yml, "evidence: {enabled: true}", "evidence: {enabled: true, latency_threshold: 1us}", 1)))
	paths, bad, sus, _, _, evBytes, _ := evidenceSeries(t, e)
	_, plain := linkSeries(t, e)
	keep := min(len(want), config.DefaultEvidenceMaxLinks)
	info, infoBytes := linkInfoText(t, e)
	t.Logf("every path bad, default max_links: %d link_paths, %d link_bad_paths, %d link_suspicion, %v capped (%d bytes); %d link_info (%d bytes)",
		paths, bad, sus, plain["ibtracer_evidence_links_capped"], evBytes, info, infoBytes)
	if paths != keep || bad != keep || sus != keep || info != keep || plain["ibtracer_evidence_links_capped"] != float64(len(want)-keep) {
		t.Fatalf("default max_links: %d, %d, %d link series, %v capped; want %d each, %d capped", paths, bad, sus,
			plain["ibtracer_evidence_links_capped"], keep, len(want)-keep)
	}
}

func evidenceCauses() []string {
	return []string{"failed", "mismatch", "lost", "link", "latency"}
}

func TestEvidenceSeriesBudget(t *testing.T) {
	checkEvidenceBudget(t, 8, 4, 16, 100)
}

// TestEvidenceSeriesAtScale measures the evidence series of 10,000
// destinations on the 10,240-port simulated fabric (128 leaves, 64
// spines, 80 hosts a leaf). Heavy: run it with IBTRACER_EVIDENCE_BENCH=1
// (docs/metrics.md, "Series budget").
func TestEvidenceSeriesAtScale(t *testing.T) {
	if os.Getenv("IBTRACER_EVIDENCE_BENCH") == "" {
		t.Skip("set IBTRACER_EVIDENCE_BENCH=1 to measure the evidence series at 10,000 destinations")
	}
	checkEvidenceBudget(t, 128, 64, 80, 10000)
}

// max_links keeps the most suspected links, says how many it left out,
// and logs once when it starts to and once when it stops.
func TestEvidenceMaxLinks(t *testing.T) {
	topo, err := sim.FatTree2(8, 4, 16, 1)
	if err != nil {
		t.Fatal(err)
	}
	f, err := sim.New(topo, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, names, lids, yml := evidenceScale(t, f, "H0-0", 100)
	var logs syncbuf.Buffer
	e.logger = log.NewLogfmtLogger(&logs)
	traceByTables(e, f, "H0-0", names, lids, time.Unix(1_800_000_000, 0))
	const max = 5
	e.Apply(mustConfig(t, strings.Replace(yml, "evidence: {enabled: true}", "evidence: {enabled: true, latency_threshold: 1us, max_links: 5}", 1)))
	var acc localize.Accumulator
	for _, n := range names {
		p, _ := e.dests.get(n).evidence(time.Microsecond)
		acc.Add(p)
	}
	ranked := localize.Rank(acc.Evidence(), localize.BySuspicion)
	if len(ranked) <= max {
		t.Fatalf("%d links named, want more than %d", len(ranked), max)
	}
	for i := 0; i < 2; i++ {
		got, plain := linkSeries(t, e)
		if len(got["ibtracer_link_suspicion"]) != max || len(got["ibtracer_link_paths"]) != max || len(got["ibtracer_link_bad_paths"]) != max {
			t.Fatalf("%d link series, want %d each", len(got["ibtracer_link_suspicion"]), max)
		}
		for _, le := range ranked[:max] {
			if got["ibtracer_link_suspicion"][le.Link] != le.Suspicion {
				t.Errorf("%v: suspicion %g, want %g (among the %d most suspected)", le.Link, got["ibtracer_link_suspicion"][le.Link], le.Suspicion, max)
			}
		}
		if plain["ibtracer_evidence_links_capped"] != float64(len(ranked)-max) {
			t.Fatalf("capped %v, want %d", plain["ibtracer_evidence_links_capped"], len(ranked)-max)
		}
	}
	if n := strings.Count(logs.String(), "link evidence capped"); n != 1 || !strings.Contains(logs.String(), "links_left_out="+strconv.Itoa(len(ranked)-max)) {
		t.Fatalf("%d capped lines in two scrapes, want 1:\n%s", n, logs.String())
	}
	e.Apply(mustConfig(t, yml))
	if _, plain := linkSeries(t, e); plain["ibtracer_evidence_links_capped"] != 0 || !strings.Contains(logs.String(), "link evidence no longer capped") {
		t.Fatalf("capped %v after the cap went:\n%s", plain["ibtracer_evidence_links_capped"], logs.String())
	}
}
