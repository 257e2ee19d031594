package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/internal/promtest"
)

// fleetScale divides every duration of the shipped rules in the fleet
// test: for:, keep_firing_for:, every range selector and offset, in the
// expressions and in the annotations' queries alike, so that the rules
// keep their proportions (a 5-minute window under a 10-minute for:).
const fleetScale = 20

var (
	ruleDurationRe = regexp.MustCompile(`(?m)^(\s*(?:for|keep_firing_for): )(\S+)$`)
	rangeRe        = regexp.MustCompile(`\[(\d+[smhdw])\]`)
	offsetRe       = regexp.MustCompile(`\boffset (\d+[smhdw])\b`)
)

// scaleRules returns the rules with every duration divided by factor
// (scaleRules is the only place the fleet test changes them).
func scaleRules(t *testing.T, rules []byte, factor int) []byte {
	t.Helper()
	scale := func(s string) string {
		d, err := model.ParseDuration(s)
		if err != nil {
			t.Fatalf("duration %q in the rules: %v", s, err)
		}
		return model.Duration(time.Duration(d) / time.Duration(factor)).String()
	}
	out := ruleDurationRe.ReplaceAllFunc(rules, func(m []byte) []byte {
		sm := ruleDurationRe.FindSubmatch(m)
		return []byte(string(sm[1]) + scale(string(sm[2])))
	})
	out = rangeRe.ReplaceAllFunc(out, func(m []byte) []byte {
		return []byte("[" + scale(string(m[1:len(m)-1])) + "]")
	})
	return offsetRe.ReplaceAllFunc(out, func(m []byte) []byte {
		return []byte("offset " + scale(string(m[len("offset "):])))
	})
}

func TestScaleRules(t *testing.T) {
	in := "        for: 10m\n        keep_firing_for: 20m\n        expr: max_over_time(x[5m]) and y[1d] and z[30m] and w offset 1h\n"
	want := "        for: 30s\n        keep_firing_for: 1m\n        expr: max_over_time(x[15s]) and y[1h12m] and z[1m30s] and w offset 3m\n"
	if got := string(scaleRules(t, []byte(in), 20)); got != want {
		t.Fatalf("scaleRules:\n%s\nwant\n%s", got, want)
	}
}

// shippedRuleFiles are the shipped rule files, the shard layer first
// (docs/metrics.md, "Where the rules run").
var shippedRuleFiles = []string{"ibtracer.shard.rules.yml", "ibtracer.rules.yml"}

// writeShippedRules writes the shipped rule files, each changed by edit,
// into dir and returns their names as a rule_files list for a
// Prometheus that runs in dir: one Prometheus evaluates both layers.
func writeShippedRules(t *testing.T, dir string, edit func([]byte) []byte) string {
	t.Helper()
	for _, f := range shippedRuleFiles {
		b, err := os.ReadFile(filepath.Join(root, "dashboards", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), edit(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return strings.Join(shippedRuleFiles, ", ")
}

// promAlert is one alert of Prometheus's /api/v1/alerts.
type promAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	State       string            `json:"state"`
	ActiveAt    time.Time         `json:"activeAt"`
}

func (a promAlert) key() string {
	keys := make([]string, 0, len(a.Labels))
	for k := range a.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%q ", k, a.Labels[k])
	}
	return b.String()
}

func promAlerts(t *testing.T, addr string) []promAlert {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/api/v1/alerts")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Data struct {
			Alerts []promAlert `json:"alerts"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	return r.Data.Alerts
}

// fleetPhase records the alerts that fire on one Prometheus (a view)
// during one phase of the fleet test and were not already firing when
// it began.
type fleetPhase struct {
	name      string
	addr      string
	before    map[string]bool      // firing when the phase began
	fired     map[string]promAlert // fired during the phase (new ones), as last seen
	summaries map[string][]string  // every summary each of them had
}

func newPhase(t *testing.T, v fleetView, name string) *fleetPhase {
	p := &fleetPhase{name: name + " (" + v.name + ")", addr: v.addr, before: map[string]bool{}, fired: map[string]promAlert{}, summaries: map[string][]string{}}
	for _, a := range promAlerts(t, v.addr) {
		if a.State == "firing" {
			p.before[a.key()] = true
		}
	}
	return p
}

// pollOnce reads the alerts once, recording the new firing ones.
func (p *fleetPhase) pollOnce(t *testing.T) {
	t.Helper()
	for _, a := range promAlerts(t, p.addr) {
		if a.State == "firing" && !p.before[a.key()] {
			p.fired[a.key()] = a
			if sums := p.summaries[a.key()]; len(sums) == 0 || sums[len(sums)-1] != a.Annotations["summary"] {
				p.summaries[a.key()] = append(sums, a.Annotations["summary"])
			}
		}
	}
}

// fleetPhases is one phase as each view sees it, in the views' order.
type fleetPhases []*fleetPhase

func newPhases(t *testing.T, views []fleetView, name string) fleetPhases {
	var ps fleetPhases
	for _, v := range views {
		ps = append(ps, newPhase(t, v, name))
	}
	return ps
}

// watch polls every view's alerts every second for d, recording the new
// firing ones; it stops early once done (if given) holds.
func (ps fleetPhases) watch(t *testing.T, d time.Duration, done func() bool) {
	t.Helper()
	poll(d, time.Second, func() bool {
		for _, p := range ps {
			p.pollOnce(t)
		}
		return done != nil && done()
	})
}

// report logs each view's alerts, and the shard:ibtracer_* series it
// holds now: the recorded series that reach the global layer
// (docs/exporter.md, "Sizing a fleet").
func (ps fleetPhases) report(t *testing.T) {
	t.Helper()
	for _, p := range ps {
		p.report(t)
		t.Logf("%s: shard:ibtracer_* series %s", p.name, seriesByName(t, p.addr, `{__name__=~"shard:ibtracer_.*"}`))
		t.Logf("%s: latency ratios %s", p.name, latencyRatios(p.addr))
	}
}

// latencyRatios says how far IBTracerLatencyHigh's ratios came in the
// last 2 minutes: the highest ratio of a destination to its baseline,
// the highest fabric ratio, the highest ratio of a destination to its
// baseline and the fabric's (the alert wants 3 of each), and the most
// destinations that met the alert's condition with the default rise
// floor (0.5 ms, not the test's 1 s) for a whole scaled for: (15 s).
func latencyRatios(addr string) string {
	var parts []string
	for _, q := range []string{
		`max(max_over_time(ibtracer:latency:ratio[2m]))`,
		`max_over_time(ibtracer:latency:fabric_ratio[2m])`,
		`max(max_over_time((ibtracer:latency:ratio / on(job) group_left() ibtracer:latency:fabric_ratio)[2m:1s]))`,
		`max_over_time(count(count_over_time((
		   ibtracer:latency:ratio >= 3
		   and (ibtracer:latency:ratio >= on(job) group_left() (3 * ibtracer:latency:fabric_ratio)
		     or ibtracer:latency:ratio and on(job) (count by (job) (ibtracer:latency:ratio) < 3))
		   and on(job, dest) (ibtracer:latency:recent - ibtracer:latency:baseline >= 0.0005)
		 )[15s:1s]) >= 15)[2m:1s])`,
	} {
		resp, err := http.Get("http://" + addr + "/api/v1/query?query=" + url.QueryEscape(q))
		if err != nil {
			return err.Error()
		}
		var r struct {
			Data struct {
				Result []struct {
					Value [2]any `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		err = json.NewDecoder(resp.Body).Decode(&r)
		resp.Body.Close()
		v := "none"
		if err != nil {
			v = err.Error()
		} else if len(r.Data.Result) > 0 {
			v = fmt.Sprint(r.Data.Result[0].Value[1])
		}
		parts = append(parts, v)
	}
	return fmt.Sprintf("destination/baseline up to %s, fabric up to %s, destination/baseline/fabric up to %s (3, 3 and 3 page); "+
		"destinations over the default floor for 15 s: %s", parts[0], parts[1], parts[2], parts[3])
}

// seriesByName returns how many series the query sel gives on the
// Prometheus at addr, in all and by name.
func seriesByName(t *testing.T, addr, sel string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/api/v1/query?query=" + url.QueryEscape(sel))
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	var r struct {
		Data struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return err.Error()
	}
	by := map[string]int{}
	for _, s := range r.Data.Result {
		by[s.Metric["__name__"]]++
	}
	return fmt.Sprintf("%d: %v", len(r.Data.Result), by)
}

// agree: every view saw the same alerts fire, by name and count (the
// sharded setup gives what one Prometheus gives).
func (ps fleetPhases) agree(t *testing.T) {
	t.Helper()
	for _, p := range ps[1:] {
		if got, want := fmt.Sprint(p.byName()), fmt.Sprint(ps[0].byName()); got != want {
			t.Errorf("%s: %s, but %s: %s", p.name, got, ps[0].name, want)
		}
	}
}

func (p *fleetPhase) report(t *testing.T) {
	t.Helper()
	var lines []string
	for _, a := range p.fired {
		lines = append(lines, fmt.Sprintf("  %s [%s] %s", a.Labels["alertname"], a.Labels["severity"], a.Annotations["summary"]))
	}
	for k, sums := range p.summaries {
		if len(sums) > 1 {
			lines = append(lines, fmt.Sprintf("  (%s also read: %s)", p.fired[k].Labels["alertname"], strings.Join(sums[:len(sums)-1], " | ")))
		}
	}
	sort.Strings(lines)
	t.Logf("%s: %d alert(s) fired\n%s", p.name, len(p.fired), strings.Join(lines, "\n"))
}

func (p *fleetPhase) byName() map[string]int {
	n := map[string]int{}
	for _, a := range p.fired {
		n[a.Labels["alertname"]]++
	}
	return n
}

// TestFleetAlerts: 8 exporters on a 16-host fat tree (ibsim, OpenSM on a
// host of its own), each tracing the 15 other hosts every 2 s with link
// health and evidence on, scraped every second by a real Prometheus
// that evaluates the shipped rules with every duration divided by
// fleetScale (scaleRules). Four phases, each counting the alerts that
// fire in it:
//   - a healthy fabric: none;
//   - a leaf-spine cable pulled: one, naming both ends by name;
//   - a host that every exporter traces, itself an exporter, rebooting
//     (its exporter stopped, its cable pulled): one, IBTracerNodeDown,
//     not critical;
//   - a link losing errors while the paths move (its leaf's other spine
//     cable pulled, put back and pulled again): IBTracerLinkErrorsRising
//     fires once and stays firing to the end of the fault.
//
// Each phase runs at once on one Prometheus with both rule files and on
// the scale-out setup (startShardedPrometheus: two hashmod shards with the
// shard rules, a global Prometheus federating their recorded series with
// the alerts), and the alerts that fire on both must agree.
//
// IBTRACER_FLEET_RULES names another rules file (the rules of an older
// version, to measure "before"), on one Prometheus only.
func TestFleetAlerts(t *testing.T) {
	skipShort(t)
	prom := promtest.RequireTool(t, "prometheus", "prometheus")
	const lifetime = 6 * time.Minute
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "fattree-4x2x4.net"),
		ibsimtest.Options{KeepSM: true, SMHost: true, SweepSeconds: 1, Lifetime: lifetime})
	exps, targets := startFleetExporters(t, fab, lifetime)
	views := []fleetView{{"one Prometheus", startFleetPrometheus(t, prom, lifetime, targets)}}
	if os.Getenv("IBTRACER_FLEET_RULES") == "" {
		var addrs []string
		for _, h := range fleetExporterHosts {
			addrs = append(addrs, exps[h].addr)
		}
		views = append(views, fleetView{"2 shards, global federating", startShardedPrometheus(t, prom, lifetime, addrs)})
	}
	checkHealthyFabric(t, views)
	checkCablePulled(t, fab, views)
	checkHostRebooting(t, fab, views, exps["H3-2"])
	checkLinkErrorsWhilePathsMove(t, fab, views)
}

// fleetExporterHosts are the hosts of the fleet's exporters: two under
// each leaf.
var fleetExporterHosts = []string{"H0-0", "H0-2", "H1-0", "H1-2", "H2-0", "H2-2", "H3-0", "H3-2"}

// startFleetExporters starts an exporter on each of fleetExporterHosts,
// each tracing the 15 other hosts every 2 s with link health and evidence
// on, and waits for their first traces; it returns them by host, and
// their addresses quoted, as Prometheus's targets.
func startFleetExporters(t *testing.T, fab *ibsimtest.Fabric, lifetime time.Duration) (map[string]*exporterProc, []string) {
	t.Helper()
	return startMeshExporters(t, fab, lifetime, fleetExporterHosts, "interval: 2s\ntimeout: 300ms\nretries: 1\n"+
		"health: {enabled: true, expect_width: 4x, expect_speed: SDR}\nevidence: {enabled: true}\n")
}

// startMeshExporters starts an exporter on each host of on, with the
// configuration header followed by every other host of fattree-4x2x4.net
// as a destination, waits for their first traces, and returns them by
// host and their addresses quoted, as Prometheus's targets.
func startMeshExporters(t *testing.T, fab *ibsimtest.Fabric, lifetime time.Duration, on []string, header string) (map[string]*exporterProc, []string) {
	t.Helper()
	lids := lidsOf(t, fab, "H0-0")
	var hosts []string
	for n := range lids {
		if strings.HasPrefix(n, "H") {
			hosts = append(hosts, n)
		}
	}
	sort.Strings(hosts)
	if len(hosts) != 16 {
		t.Fatalf("%d hosts in fattree-4x2x4.net, want 16: %v", len(hosts), lids)
	}
	exps := map[string]*exporterProc{}
	var targets []string
	for _, h := range on {
		var b strings.Builder
		b.WriteString(header + "destinations:\n")
		for _, d := range hosts {
			if d != h {
				fmt.Fprintf(&b, "  - {name: %s, lid: %d}\n", d, lids[d])
			}
		}
		e := startExporterFor(t, lifetime, nil, []string{"IBSIM_SOCKNAME=" + fab.SockName}, b.String(),
			"--ib.transport=ibsim", "--ibsim.node="+h)
		exps[h] = e
		targets = append(targets, fmt.Sprintf("%q", e.addr))
	}
	for _, h := range on {
		var others []string
		for _, d := range hosts {
			if d != h {
				others = append(others, d)
			}
		}
		exps[h].waitFor(90*time.Second, "first traces from "+h, allTraced(others...))
	}
	return exps, targets
}

// startFleetPrometheus starts Prometheus scraping targets every second
// and evaluating the shipped rules (or IBTRACER_FLEET_RULES) scaled by
// fleetScale, and waits until it has scraped every exporter a few times;
// it returns its address.
func startFleetPrometheus(t *testing.T, prom string, lifetime time.Duration, targets []string) string {
	t.Helper()
	dir := t.TempDir()
	ruleFiles := writeShippedRules(t, dir, func(b []byte) []byte { return scaleRules(t, b, fleetScale) })
	if f := os.Getenv("IBTRACER_FLEET_RULES"); f != "" {
		rules, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		_ = os.WriteFile(filepath.Join(dir, "rules.yml"), scaleRules(t, rules, fleetScale), 0o644)
		ruleFiles = "rules.yml"
	}
	writeSiteThreshold(t, dir)
	promAddr := freePort(t)
	promCfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [%s, site.yml]
scrape_configs:
  - job_name: ibtracer
    static_configs:
      - targets: [%s]
`, ruleFiles, strings.Join(targets, ", "))
	_ = os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(promCfg), 0o644)
	startDaemonFor(t, lifetime, dir, prom, "--config.file=prometheus.yml", "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+promAddr)
	if !poll(30*time.Second, 500*time.Millisecond, func() bool {
		n, err := promtest.Query(promAddr, `count_over_time(up[1m]) >= 5`)
		return err == nil && n == len(fleetExporterHosts)
	}) {
		t.Fatalf("Prometheus did not scrape the %d exporters", len(fleetExporterHosts))
	}
	return promAddr
}

// writeSiteThreshold writes site.yml, the site's latency settings (the
// rules file's override, its documented setting) into dir: the smallest
// rise over its baseline for which IBTracerLatencyHigh pages, 1 s (ibsim's
// MADs take milliseconds under the fleet's load, and its latencies swing
// with the load of 8 exporters and the SM's sweeps; the report logs the
// latency ratios the rules see, latencyRatios: they are not asserted, as
// a destination's ratio needs its recent latency of an hour ago, 3
// minutes here, and the healthy and cable phases end before: the log
// says "none" there), and the threshold the
// rules before issue 42 read (IBTRACER_FLEET_RULES).
func writeSiteThreshold(t *testing.T, dir string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "site.yml"), []byte(`groups:
  - name: site
    rules:
      - record: ibtracer:latency_rise_floor_seconds:override
        expr: vector(1)
      - record: ibtracer:latency_threshold_seconds:override
        expr: vector(1)
`), 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkHealthyFabric: on a healthy fabric nothing fires over 35 s,
// longer than the longest scaled for: (10m / fleetScale); what was
// pending is logged.
func checkHealthyFabric(t *testing.T, views []fleetView) {
	t.Helper()
	healthy := newPhases(t, views, "healthy fabric")
	pendingSeen := make([]map[string]string, len(views))
	for i := range views {
		pendingSeen[i] = map[string]string{}
	}
	poll(35*time.Second, time.Second, func() bool {
		for i, v := range views {
			for _, a := range promAlerts(t, v.addr) {
				pendingSeen[i][a.key()] = a.State
			}
		}
		return false
	})
	healthy.watch(t, time.Second, nil)
	healthy.report(t)
	for i, p := range healthy {
		if len(pendingSeen[i]) > 0 {
			var ks []string
			for k, s := range pendingSeen[i] {
				ks = append(ks, s+" "+k)
			}
			sort.Strings(ks)
			t.Logf("%s: %d alert(s) pending or firing in 35 s:\n  %s", p.name, len(pendingSeen[i]), strings.Join(ks, "\n  "))
		}
		firingNow := 0
		for _, st := range pendingSeen[i] {
			if st == "firing" {
				firingNow++
			}
		}
		if len(p.fired) > 0 || firingNow > 0 {
			t.Errorf("%s: %d alert(s) fired, want none", p.name, max(len(p.fired), firingNow))
		}
	}
	healthy.agree(t)
}

// checkCablePulled: a leaf-spine cable pulled (L0 port 5 - S0 port 1)
// fires one alert, naming both ends; the cable is put back at the end.
func checkCablePulled(t *testing.T, fab *ibsimtest.Fabric, views []fleetView) {
	t.Helper()
	cable := newPhases(t, views, "leaf-spine cable L0[5]-S0[1] pulled")
	if err := fab.Console(`Unlink "L0"[5]`); err != nil {
		t.Fatal(err)
	}
	// Both ends by name, GUID and port, as the alerts write a link's end.
	l0, s0 := regexp.MustCompile(`\bL0 \(0x[0-9a-f]{16}\) port 5\b`), regexp.MustCompile(`\bS0 \(0x[0-9a-f]{16}\) port 1\b`)
	named := func(p *fleetPhase) bool {
		for _, sums := range p.summaries {
			for _, s := range sums {
				if l0.MatchString(s) && s0.MatchString(s) {
					return true
				}
			}
		}
		return false
	}
	cable.watch(t, 45*time.Second, func() bool {
		all := true
		for _, p := range cable {
			all = all && named(p)
		}
		return all
	})
	cable.watch(t, 15*time.Second, nil) // what else fires
	cable.report(t)
	for _, p := range cable {
		if !named(p) {
			t.Errorf("%s: no alert names both ends (L0 port 5, S0 port 1)", p.name)
		}
		if len(p.fired) != 1 {
			t.Errorf("%s: %d alerts, want 1", p.name, len(p.fired))
		}
		for n, c := range p.byName() {
			if c > 1 {
				t.Errorf("%s: %s fired %d times, want once", p.name, n, c)
			}
		}
	}
	cable.agree(t)
	if err := fab.Console(`Link "L0"[5] "S0"[1]`); err != nil {
		t.Fatal(err)
	}
}

// checkHostRebooting: a host every exporter traces reboots: H3-2's
// exporter (e) stops and its cable (L3 port 3) is pulled, for longer than
// every scaled for:. One alert, IBTracerNodeDown, not critical.
func checkHostRebooting(t *testing.T, fab *ibsimtest.Fabric, views []fleetView, e *exporterProc) {
	t.Helper()
	reboot := newPhases(t, views, "host H3-2 rebooting")
	stopProcess(e.cmd)
	if err := fab.Console(`Unlink "L3"[3]`); err != nil {
		t.Fatal(err)
	}
	reboot.watch(t, 40*time.Second, nil)
	reboot.report(t)
	for _, p := range reboot {
		// The cable of the phase before is back: its IBTracerPathChanged
		// (firing when this phase began) ends once the exporters read the
		// link up (docs/metrics.md, "No flapping"), not a hold later.
		for k := range p.before {
			if strings.Contains(k, "IBTracerPathChanged") {
				t.Logf("%s: %s was firing when the phase began", p.name, k)
			}
		}
		for _, a := range promAlerts(t, p.addr) {
			if k := a.key(); a.Labels["alertname"] == "IBTracerPathChanged" && a.State == "firing" && p.before[k] {
				t.Errorf("%s: %s, firing for the cable put back before the phase, still fires", p.name, k)
			}
		}
		for _, a := range p.fired {
			if a.Labels["severity"] == "critical" {
				t.Errorf("%s: critical alert %s", p.name, a.key())
			}
		}
		if len(p.fired) != 1 {
			t.Errorf("%s: %d alerts, want 1", p.name, len(p.fired))
		}
		if p.byName()["IBTracerNodeDown"] != 1 {
			t.Errorf("%s: IBTracerNodeDown fired %d times, want once", p.name, p.byName()["IBTracerNodeDown"])
		}
	}
	reboot.agree(t)
}

// linkErrorsAlert follows IBTracerLinkErrorsRising for the L1-S1 link
// in the phase errs: the first time it fires, and whether it fires again
// (another alert, or another activeAt) afterwards.
type linkErrorsAlert struct {
	errs        *fleetPhase
	start       time.Time
	gaps        int // polls in which it was not firing after it first fired
	firstKey    string
	firstActive time.Time
	firedAt     time.Time
}

// firing polls the alerts once and says whether the link's alert is
// firing. Not errs.before: one run found the link's alert firing when
// the phase began (it had been read erroring before); it must then stay
// firing, with the same activeAt.
func (l *linkErrorsAlert) firing(t *testing.T) bool {
	t.Helper()
	firing := false
	for _, a := range promAlerts(t, l.errs.addr) {
		if a.Labels["alertname"] != "IBTracerLinkErrorsRising" || a.State != "firing" {
			continue
		}
		if !strings.Contains(a.Annotations["summary"], "L1") || !strings.Contains(a.Annotations["summary"], "S1") {
			continue
		}
		firing = true
		l.errs.fired[a.key()] = a
		if l.firstKey == "" {
			l.firstKey, l.firstActive, l.firedAt = a.key(), a.ActiveAt, time.Now()
			t.Logf("%s: %s fires at +%v (active since %v before the phase; firing when it began: %v)", l.errs.name, a.Annotations["summary"],
				time.Since(l.start).Round(time.Second), l.start.Sub(a.ActiveAt).Round(time.Second), l.errs.before[a.key()])
		} else if a.key() != l.firstKey || !a.ActiveAt.Equal(l.firstActive) {
			t.Errorf("%s: fired again: %s active at %v, first %s at %v", l.errs.name, a.key(), a.ActiveAt, l.firstKey, l.firstActive)
		}
	}
	return firing
}

// checkLinkErrorsWhilePathsMove: a link losing errors (L1 port 6 - S1
// port 2, about 2 symbol errors a second at L1's end) while the paths
// move: L1's other spine cable (L1 port 5 - S0) is pulled first, so that
// every path to and from L1's hosts crosses the erroring link, and once
// the alert fires it is put back (paths move to S0 again) and pulled
// again, 20 s apart. IBTracerLinkErrorsRising fires once and stays
// firing to the end.
func checkLinkErrorsWhilePathsMove(t *testing.T, fab *ibsimtest.Fabric, views []fleetView) {
	t.Helper()
	errs := newPhases(t, views, "link L1[6]-S1[2] losing errors while paths move")
	if err := fab.Console(`Unlink "L1"[5]`); err != nil {
		t.Fatal(err)
	}
	var ls []*linkErrorsAlert
	for _, p := range errs {
		ls = append(ls, &linkErrorsAlert{errs: p, start: time.Now()})
	}
	// firedAt: once the alert fires on every view, the last of them.
	var firedAt time.Time
	step, moves := 0, 0
	for {
		step++
		if err := fab.Console(fmt.Sprintf(`PerformanceSet "L1"[6] PortCounters.SymbolErrorCounter=%d`, 2*step)); err != nil {
			t.Fatal(err)
		}
		all := true
		for _, l := range ls {
			if firing := l.firing(t); l.firstKey != "" && !firing {
				l.gaps++
			}
			all = all && l.firstKey != ""
			if all && l.firedAt.After(firedAt) {
				firedAt = l.firedAt
			}
		}
		if !all {
			firedAt = time.Time{}
		}
		switch {
		case !all && time.Since(ls[0].start) > 90*time.Second:
		case !all:
			time.Sleep(time.Second)
			continue
		case moves == 0 && time.Since(firedAt) > 5*time.Second:
			if err := fab.Console(`Link "L1"[5] "S0"[2]`); err != nil {
				t.Fatal(err)
			}
			moves++
		case moves == 1 && time.Since(firedAt) > 25*time.Second:
			if err := fab.Console(`Unlink "L1"[5]`); err != nil {
				t.Fatal(err)
			}
			moves++
		case moves == 2 && time.Since(firedAt) > 45*time.Second:
			moves++
		}
		if !all || moves == 3 {
			break
		}
		time.Sleep(time.Second)
	}
	errs.report(t)
	for _, l := range ls {
		if l.firstKey == "" {
			logLinkErrorReadings(t, l.errs.addr)
			t.Errorf("%s: IBTracerLinkErrorsRising never fired for L1-S1", l.errs.name)
		} else if l.gaps > 0 {
			t.Errorf("%s: IBTracerLinkErrorsRising was not firing in %d polls after it first fired", l.errs.name, l.gaps)
		}
	}
	errs.agree(t)
}

// logLinkErrorReadings logs what Prometheus holds of the link's error
// readings, to tell a reading that never came from a rule that did not
// fire.
func logLinkErrorReadings(t *testing.T, promAddr string) {
	t.Helper()
	for _, q := range []string{
		`max by (instance) (max_over_time(ibtracer_link_errors{node_guid=~".*"}[2m])) > 0`,
		`count by (state, node_guid, port) (ibtracer_link_counters_state{node_guid="0x0000000000200003"} == 1)`,
		`ALERTS{alertname="IBTracerLinkErrorsRising"}`,
	} {
		resp, err := http.Get("http://" + promAddr + "/api/v1/query?query=" + url.QueryEscape(q))
		if err != nil {
			t.Logf("%s: %v", q, err)
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Logf("%s:\n%s", q, b)
	}
}
