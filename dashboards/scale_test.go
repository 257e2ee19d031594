package dashboards

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-foundation-sdk/go/prometheus"

	"github.com/ibtracer/ibtracer_exporter/internal/promtest"
)

// The synthetic fleet of TestDashboardAtFleetScale: 2,000 exporters on
// the hosts of a fat tree (125 leaves of 16 hosts, 16 spines), each
// tracing 16 other hosts over 4 hops.
const (
	scaleExporters  = 2000
	scaleDests      = 16
	scaleHostsLeaf  = 16
	scaleSpines     = 16
	scaleMaxSeries  = 300              // per panel query
	scaleQueryLimit = 30 * time.Second // per panel query, on 2 shared cores with the rules evaluating
)

// fleetGUIDs: hosts 0x10_0000_0000 + i, leaves 0x20_0000_0000 + l, spines
// 0x30_0000_0000 + s.
func hostGUID(i int) string  { return fmt.Sprintf("0x%016x", 0x1000000000+i) }
func leafGUID(l int) string  { return fmt.Sprintf("0x%016x", 0x2000000000+l) }
func spineGUID(s int) string { return fmt.Sprintf("0x%016x", 0x3000000000+s) }

// scaleHop is one hop of a synthetic path.
type scaleHop struct {
	guid, desc, typ string
	in, out         int
}

// scalePath is exporter i's path to its k-th destination, host j: leaf,
// spine, leaf, host.
func scalePath(i, k int) (j int, hops []scaleHop) {
	j = (i + 1 + k*(scaleExporters/scaleDests)) % scaleExporters
	li, lj, s := i/scaleHostsLeaf, j/scaleHostsLeaf, j%scaleSpines
	return j, []scaleHop{
		{leafGUID(li), fmt.Sprintf("leaf%03d", li), "switch", i%scaleHostsLeaf + 1, scaleHostsLeaf + 1 + s},
		{spineGUID(s), fmt.Sprintf("spine%02d", s), "switch", li + 1, lj + 1},
		{leafGUID(lj), fmt.Sprintf("leaf%03d", lj), "switch", scaleHostsLeaf + 1 + s, j%scaleHostsLeaf + 1},
		{hostGUID(j), fmt.Sprintf("host%04d", j), "ca", 1, 0},
	}
}

// scaleLink is a link of a path, its labels in the exporter's order.
func scaleLinks(i int, hops []scaleHop) [][4]string {
	prevGUID, prevPort := hostGUID(i), 1
	var out [][4]string
	for _, h := range hops {
		out = append(out, [4]string{prevGUID, fmt.Sprint(prevPort), h.guid, fmt.Sprint(h.in)})
		prevGUID, prevPort = h.guid, h.out
	}
	return out
}

// The faults of the synthetic fleet: one leaf-spine link trained narrow
// (every path over it unhealthy, the link suspected), one destination in
// a hundred unreachable, one exporter down.
func degradedLink(l [4]string) bool {
	return l[0] == leafGUID(3) && l[2] == spineGUID(5)
}

func unreachable(i, k int) bool { return i%100 == 0 && k == 0 }

const downExporter = scaleExporters - 1

// writeFleet writes the OpenMetrics text of the synthetic fleet, each
// series sampled at the times ts (seconds), family after family.
func writeFleet(w io.Writer, ts []int64) {
	f := fleetWriter{w: w, ts: ts}
	f.writeExporters()
	f.writeHistograms()
	f.writeDestinations()
	f.writeHops()
	f.writeLinks()
	fmt.Fprintln(w, "# EOF")
}

// fleetWriter writes the series of the synthetic fleet to w, each
// sampled at the times ts (seconds).
type fleetWriter struct {
	w  io.Writer
	ts []int64
}

// inst is the labels of exporter i's target.
func inst(i int) string { return fmt.Sprintf(`instance="e%04d:9684",job="ibtracer"`, i) }

func constant(v float64) func(int) float64 { return func(int) float64 { return v } }

func counter(per float64) func(int) float64 { return func(n int) float64 { return per * float64(n+1) } }

func one(_, _ int) float64 { return 1 }

// healthy says whether exporter i's path to its k-th destination crosses
// no degraded link.
func healthy(i, k int) bool {
	_, hops := scalePath(i, k)
	for _, l := range scaleLinks(i, hops) {
		if degradedLink(l) {
			return false
		}
	}
	return true
}

// sample writes one series at every time, value(n) at the n-th.
func (f fleetWriter) sample(series string, value func(n int) float64) {
	for n, t := range f.ts {
		fmt.Fprintf(f.w, "%s %g %d\n", series, value(n), t)
	}
}

// perExporter writes the series name{labels} of every exporter.
func (f fleetWriter) perExporter(name string, labels string, value func(i, n int) float64) {
	for i := 0; i < scaleExporters; i++ {
		l := inst(i)
		if labels != "" {
			l += "," + labels
		}
		ii := i
		f.sample(name+"{"+l+"}", func(n int) float64 { return value(ii, n) })
	}
}

// perDest writes the series name of every exporter's every destination.
func (f fleetWriter) perDest(name string, value func(i, k, n int) float64) {
	for i := 0; i < scaleExporters; i++ {
		for k := 0; k < scaleDests; k++ {
			j, _ := scalePath(i, k)
			ii, kk := i, k
			f.sample(fmt.Sprintf(`%s{%s,dest="host%04d"}`, name, inst(i), j), func(n int) float64 { return value(ii, kk, n) })
		}
	}
}

// writeExporters writes the exporter's own families.
func (f fleetWriter) writeExporters() {
	f.perExporter("up", "", func(i, _ int) float64 {
		if i == downExporter {
			return 0
		}
		return 1
	})
	for _, name := range []string{"ibtracer_device_up", "ibtracer_config_last_reload_successful"} {
		f.perExporter(name, "", one)
	}
	f.perExporter("ibtracer_destinations", "", func(_, _ int) float64 { return scaleDests })
	f.perExporter("ibtracer_interval_seconds", "", func(_, _ int) float64 { return 60 })
	f.perExporter("ibtracer_scrape_errors_total", "", func(_, _ int) float64 { return 0 })
	f.perExporter("ibtracer_mad_outstanding", "", func(i, _ int) float64 { return float64(i % 7) })
	f.perExporter("ibtracer_health_mads_total", "", func(_, n int) float64 { return 100 * float64(n+1) })
	for i := 0; i < scaleExporters; i++ {
		f.sample(fmt.Sprintf(`ibtracer_local_port_info{%s,node_guid=%q,port_guid=%q,node_name="host%04d"}`, inst(i), hostGUID(i), hostGUID(i), i), constant(1))
	}
	for _, name := range []string{"ibtracer_mad_timeouts_total", "ibtracer_mad_retries_total"} {
		for _, class := range []string{"smp_dr", "smp", "sa", "ibtracer"} {
			f.perExporter(name, `class="`+class+`"`, func(i, n int) float64 { return float64(i%3) * float64(n+1) })
		}
	}
	f.perExporter("ibtracer_agent_requests_total", `attribute="SourceRoute",result="ok"`, func(_, n int) float64 { return 30 * float64(n+1) })
	f.perExporter("ibtracer_evidence_links_capped", "", func(_, _ int) float64 { return 0 })
	for _, cause := range []string{"failed", "mismatch", "lost", "link", "latency"} {
		f.perExporter("ibtracer_evidence_bad_path_causes", `cause="`+cause+`"`, func(_, _ int) float64 { return 0 })
	}
	f.perExporter("ibtracer_evidence_bad_paths", "", func(i, _ int) float64 {
		bad := 0
		for k := 0; k < scaleDests; k++ {
			if !healthy(i, k) || unreachable(i, k) {
				bad++
			}
		}
		return float64(bad)
	})
}

// writeHistograms writes the classic histograms (the latency and MAD
// round-trip panels read the buckets when there is no native histogram).
func (f fleetWriter) writeHistograms() {
	buckets := []string{"0.0001", "0.001", "0.01", "0.1", "+Inf"}
	for _, h := range []struct{ name, labels string }{{"ibtracer_latency_seconds", ""}, {"ibtracer_mad_rtt_seconds", `class="smp_dr"`}} {
		for bi, le := range buckets {
			l := `le="` + le + `"`
			if h.labels != "" {
				l = h.labels + "," + l
			}
			f.perExporter(h.name+"_bucket", l, func(_, n int) float64 { return float64((bi+1)*10) * float64(n+1) })
		}
		f.perExporter(h.name+"_sum", h.labels, func(_, n int) float64 { return 0.01 * float64(n+1) })
		f.perExporter(h.name+"_count", h.labels, func(_, n int) float64 { return 50 * float64(n+1) })
	}
}

// writeDestinations writes the families of every destination.
func (f fleetWriter) writeDestinations() {
	f.perDest("ibtracer_destination_info", func(_, _, _ int) float64 { return 1 })
	f.perDest("ibtracer_trace_success", func(i, k, _ int) float64 {
		if unreachable(i, k) {
			return 0
		}
		return 1
	})
	f.perDest("ibtracer_last_trace_timestamp_seconds", func(_, _, n int) float64 { return float64(f.ts[n]) })
	f.perDest("ibtracer_last_trace_duration_seconds", func(i, _, _ int) float64 { return 0.001 * float64(1+i%5) })
	f.perDest("ibtracer_last_trace_mads", func(_, _, _ int) float64 { return 5 })
	f.perDest("ibtracer_path_changes_total", func(i, k, n int) float64 { return float64((i + k) % 3 * n) })
	f.perDest("ibtracer_path_hops", func(_, _, _ int) float64 { return 4 })
	f.perDest("ibtracer_path_mismatched_hops", func(_, _, _ int) float64 { return 0 })
	f.perDest("ibtracer_path_unsupported_hops", func(_, _, _ int) float64 { return 0 })
	f.perDest("ibtracer_path_validated_hops", func(_, _, _ int) float64 { return 4 })
	f.perDest("ibtracer_path_healthy", func(i, k, _ int) float64 {
		if healthy(i, k) {
			return 1
		}
		return 0
	})
	f.perDest("ibtracer_path_rate_bytes_per_second", func(i, k, _ int) float64 {
		if healthy(i, k) {
			return 5e9
		}
		return 1.25e9
	})
	for i := 0; i < scaleExporters; i++ {
		for k := 0; k < scaleDests; k++ {
			if !unreachable(i, k) {
				continue
			}
			j, _ := scalePath(i, k)
			d := fmt.Sprintf(`%s,dest="host%04d"`, inst(i), j)
			f.sample(`ibtracer_trace_failures_total{`+d+`,reason="no_route"}`, counter(1))
			f.sample(fmt.Sprintf(`ibtracer_destination_last_port_info{%s,node_guid=%q,port_guid=%q,node_name="host%04d"}`, d, hostGUID(j), hostGUID(j), j), constant(1))
		}
	}
}

// writeHops writes the hop families of every traced path.
func (f fleetWriter) writeHops() {
	f.hopFamily("ibtracer_hop_info", func(h scaleHop) string {
		return fmt.Sprintf(`node_guid=%q,port_guid=%q,node_desc=%q,node_type=%q,lid="1",in_port="%d",out_port="%d"`, h.guid, h.guid, h.desc, h.typ, h.in, h.out)
	}, 1)
	f.hopFamily("ibtracer_hop_verdict", func(h scaleHop) string { return `verdict="validated",validated_by="sma"` }, 1)
	f.hopFamily("ibtracer_hop_rtt_seconds", func(h scaleHop) string { return `validated_by="sma"` }, 0.0002)
}

// hopFamily writes the series name of every hop of every path traced.
func (f fleetWriter) hopFamily(name string, labels func(h scaleHop) string, value float64) {
	for i := 0; i < scaleExporters; i++ {
		for k := 0; k < scaleDests; k++ {
			if unreachable(i, k) {
				continue // a failed trace has no hop series
			}
			j, hops := scalePath(i, k)
			for n, h := range hops {
				f.sample(fmt.Sprintf(`%s{%s,dest="host%04d",hop="%d",%s}`, name, inst(i), j, n+1, labels(h)), constant(value))
			}
		}
	}
}

// linkLabels is the labels of a link, in the exporter's order.
func linkLabels(l [4]string) string {
	return fmt.Sprintf(`node_guid=%q,port=%q,remote_node_guid=%q,remote_port=%q`, l[0], l[1], l[2], l[3])
}

// exporterLinks is the links of exporter i's paths, each once.
func exporterLinks(i int) [][4]string {
	seen := map[[4]string]bool{}
	var out [][4]string
	for k := 0; k < scaleDests; k++ {
		_, hops := scalePath(i, k)
		for _, l := range scaleLinks(i, hops) {
			if !seen[l] {
				seen[l] = true
				out = append(out, l)
			}
		}
	}
	return out
}

// writeLinks writes the families of every link of each exporter's paths.
func (f fleetWriter) writeLinks() {
	for _, name := range []string{"ibtracer_link_status", "ibtracer_link_errors"} {
		for i := 0; i < scaleExporters; i++ {
			for _, l := range exporterLinks(i) {
				switch {
				case name == "ibtracer_link_errors":
					f.sample(fmt.Sprintf(`%s{%s,%s}`, name, inst(i), linkLabels(l)), constant(0))
				case degradedLink(l):
					f.sample(fmt.Sprintf(`%s{%s,%s,verdict="width_degraded"}`, name, inst(i), linkLabels(l)), constant(1))
				default:
					f.sample(fmt.Sprintf(`%s{%s,%s,verdict="ok"}`, name, inst(i), linkLabels(l)), constant(1))
				}
			}
		}
	}
	for _, name := range []string{"ibtracer_link_info", "ibtracer_link_suspicion", "ibtracer_link_bad_paths", "ibtracer_link_paths"} {
		for i := 0; i < scaleExporters; i++ {
			for _, l := range exporterLinks(i) {
				if !degradedLink(l) {
					continue
				}
				if name == "ibtracer_link_info" {
					f.sample(fmt.Sprintf(`%s{%s,%s,node_desc="leaf003",remote_node_desc="spine05",node_name="leaf003",remote_node_name="spine05"}`, name, inst(i), linkLabels(l)), constant(1))
					continue
				}
				f.sample(fmt.Sprintf(`%s{%s,%s}`, name, inst(i), linkLabels(l)), constant(1))
			}
		}
	}
}

// TestDashboardAtFleetScale: the dashboard's queries over a synthetic
// TSDB of 2,000 exporters x 16 destinations (promtool tsdb
// create-blocks-from openmetrics; every series of the metrics the
// dashboard reads, per exporter, destination, hop and link), in a real
// Prometheus that evaluates the shipped rules over it: every panel's
// query, with every variable at All (the destination drill-down row's
// with one exporter and one destination), returns at most scaleMaxSeries
// series within scaleQueryLimit. A new panel that draws one series per
// (instance, destination) fails here; a metric the generator does not
// write fails too (add it to writeFleet).
func TestDashboardAtFleetScale(t *testing.T) {
	if testing.Short() {
		t.Skip("backfills a TSDB of 2,000 exporters: skipped with -short")
	}
	promtool := promtest.RequireTool(t, "promtool", "prometheus")
	prom := promtest.RequireTool(t, "prometheus", "prometheus")
	d := shippedDashboard(t)
	start := time.Now()
	dir := t.TempDir()
	now := time.Now().Unix()
	ts := []int64{now - 90, now - 30} // two samples: a rate over the test's 10m has both
	om := filepath.Join(dir, "fleet.om")
	f, err := os.Create(om)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	writeFleet(bw, ts)
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	fi, _ := os.Stat(om)
	t.Logf("synthetic fleet: %d MB of OpenMetrics in %v", fi.Size()>>20, time.Since(start).Round(time.Millisecond))

	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	tsdb := filepath.Join(dir, "tsdb")
	t0 := time.Now()
	if out, err := exec.CommandContext(ctx, promtool, "tsdb", "create-blocks-from", "openmetrics", om, tsdb).CombinedOutput(); err != nil {
		t.Fatalf("promtool tsdb create-blocks-from openmetrics: %v\n%s", err, tail(out))
	}
	os.Remove(om)
	t.Logf("backfilled in %v", time.Since(t0).Round(time.Millisecond))

	shardRules, err := filepath.Abs(shardRulesFile)
	if err != nil {
		t.Fatal(err)
	}
	rules, err := filepath.Abs(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "prometheus.yml")
	_ = os.WriteFile(cfg, []byte("global:\n  evaluation_interval: 30s\nrule_files: ["+shardRules+", "+rules+"]\n"), 0o644)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.CommandContext(ctx, prom, "--config.file="+cfg, "--storage.tsdb.path="+tsdb, "--web.listen-address="+addr, "--query.timeout=30s",
		// The backfilled samples are minutes old by the time the queries
		// run: a lookback longer than the test keeps them visible.
		"--query.lookback-delta=15m")
	logf, _ := os.Create(filepath.Join(dir, "prometheus.log"))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("prometheus log:\n%s", tail(b))
		}
	}()
	// The fleet is there, and the rules have run over it.
	var n int
	deadline := time.Now().Add(3 * time.Minute)
	for {
		n, err = promtest.Query(addr, `ibtracer:link_degraded:exporters`)
		if err == nil && n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the rules did not record ibtracer:link_degraded:exporters over the backfilled fleet: %d series, %v", n, err)
		}
		time.Sleep(time.Second)
	}
	if n, err = promtest.Query(addr, `ibtracer_trace_success`); err != nil || n != scaleExporters*scaleDests {
		t.Fatalf("ibtracer_trace_success: %d series, want %d: %v", n, scaleExporters*scaleDests, err)
	}

	vars := strings.NewReplacer("$job", ".*", "$instance", ".*", "$destination", ".*", "$switch", ".*", "$guid", ".*",
		"$__rate_interval", "10m", "$__range", "10m")
	// An exporter series, not a recorded one (shard:ibtracer_...:...).
	metricRe := regexp.MustCompile(`(?:^|[^:\w])(ibtracer_[a-z_]+)\b`)
	type result struct {
		panel  string
		series int
		took   time.Duration
	}
	var results []result
	// The destination drill-down row is for one destination from one
	// exporter (its title says so): its panels run with those variables
	// narrowed to one; every other panel with every variable at All.
	narrow := strings.NewReplacer("$job", ".*", "$instance", "e0000:9684", "$destination", "host0001", "$switch", ".*", "$guid", ".*",
		"$__rate_interval", "10m", "$__range", "10m")
	drill := map[string]bool{}
	var rawDash struct {
		Panels []struct {
			Type  string `json:"type"`
			Title string `json:"title"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(readDashboard(t), &rawDash); err != nil {
		t.Fatal(err)
	}
	inDrill := false
	for _, p := range rawDash.Panels {
		if p.Type == "row" {
			inDrill = strings.HasPrefix(p.Title, "Destination drill-down")
			continue
		}
		drill[p.Title] = inDrill
	}
	for _, p := range allPanels(d) {
		for _, q := range p.Targets {
			expr := vars.Replace(q.(*prometheus.Dataquery).Expr)
			if drill[title(p)] {
				expr = narrow.Replace(q.(*prometheus.Dataquery).Expr)
			}
			for _, sm := range metricRe.FindAllStringSubmatch(expr, -1) {
				m := sm[1]
				// A histogram's native form has no _bucket series; the
				// classic one the fleet writes stands for it.
				if c, err := queryCount(addr, fmt.Sprintf("count(%s) or count(%s_bucket)", m, m)); err != nil {
					t.Fatalf("panel %q: count(%s): %v", title(p), m, err)
				} else if c == 0 {
					t.Errorf("panel %q reads %s, which the synthetic fleet does not write (add it to writeFleet)", title(p), m)
				}
			}
			q0 := time.Now()
			n, err := queryCount(addr, expr)
			took := time.Since(q0)
			results = append(results, result{title(p), n, took})
			switch {
			case err != nil:
				t.Errorf("panel %q: %s: %v", title(p), expr, err)
			case n > scaleMaxSeries:
				t.Errorf("panel %q returns %d series at 2,000 exporters (at most %d): %s", title(p), n, scaleMaxSeries, expr)
			case took > scaleQueryLimit:
				t.Errorf("panel %q took %v (at most %v): %s", title(p), took, scaleQueryLimit, expr)
			}
		}
	}
	sort.Slice(results, func(i, j int) bool { return results[i].series > results[j].series })
	var b strings.Builder
	for _, r := range results[:min(8, len(results))] {
		fmt.Fprintf(&b, "\n  %4d series in %6v  %s", r.series, r.took.Round(time.Millisecond), r.panel)
	}
	sort.Slice(results, func(i, j int) bool { return results[i].took > results[j].took })
	fmt.Fprintf(&b, "\n  slowest: %v (%s)", results[0].took.Round(time.Millisecond), results[0].panel)
	t.Logf("%d queries over %d exporters x %d destinations, the largest:%s\n  whole test: %v", len(results), scaleExporters,
		scaleDests, b.String(), time.Since(start).Round(time.Second))
}

// queryCount runs an instant query with a timeout and counts the series
// it returns.
func queryCount(addr, expr string) (int, error) {
	return promtest.QueryWithin(addr, expr, 2*scaleQueryLimit)
}

func tail(b []byte) []byte {
	if len(b) > 3000 {
		return b[len(b)-3000:]
	}
	return b
}
