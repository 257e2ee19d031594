package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/internal/promtest"
)

// planAlert is the alert of the fabric as planned (docs/runbook.md,
// "IBTracerLinkNotAsPlanned").
const planAlert = "IBTracerLinkNotAsPlanned"

// planExporterHosts are the hosts of the plan test's exporters, one under
// each leaf: every leaf-spine cable is crossed by some exporter's paths.
var planExporterHosts = []string{"H0-0", "H1-0", "H2-0", "H3-0"}

// TestPlanAlerts is issue 44's "done when" with real peers: 4 exporters
// on the 16-host fat tree (ibsim, OpenSM on a host of its own sweeping
// every second), each tracing the 15 other hosts every 2 s with link
// health on and, as plan:, ibnetdiscover's output of the same fabric
// taken before they start; a real Prometheus scrapes them every second
// and evaluates every shipped rule file with its durations divided by
// fleetScale (for: 10m is 30 s).
//   - The fabric as planned, watched for 35 s (longer than the scaled
//     for:): every exporter judges its links planned, no
//     ibtracer_link_plan_status series exists and IBTracerLinkNotAsPlanned
//     is neither pending nor firing.
//   - L1's two spine cables swapped on ibsim's console (L1[5] to S1[2],
//     L1[6] to S0[2]; OpenSM re-sweeps): exactly two
//     IBTracerLinkNotAsPlanned alerts fire, one per swapped cable, each
//     miswired, each naming where the plan cables both its ends (by
//     name, beside the found ends), each firing once (one activeAt), and
//     no third one within 10 s of the second.
func TestPlanAlerts(t *testing.T) {
	skipShort(t)
	prom := promtest.RequireTool(t, "prometheus", "prometheus")
	const lifetime = 3 * time.Minute
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "fattree-4x2x4.net"),
		ibsimtest.Options{KeepSM: true, SMHost: true, SweepSeconds: 1, Lifetime: lifetime})
	planFile := takePlan(t, fab)
	targets := startPlanExporters(t, fab, lifetime, planFile)
	promAddr := startPlanPrometheus(t, prom, lifetime, targets)
	checkAsPlanned(t, promAddr)
	checkSwappedCables(t, fab, promAddr)
}

// takePlan writes ibnetdiscover's output of the fabric, as it is now, as
// the cabling plan, and returns its path.
func takePlan(t *testing.T, fab *ibsimtest.Fabric) string {
	t.Helper()
	out, err := fab.Tool("H0-0", "ibnetdiscover")
	if err != nil {
		t.Fatalf("ibnetdiscover: %v\n%s", err, out)
	}
	for _, want := range []string{`"S0"`, `"S1"`, `"L1"`, `"H3-3"`} {
		if !strings.Contains(out, want) {
			t.Fatalf("ibnetdiscover's output names no %s:\n%s", want, out)
		}
	}
	f := filepath.Join(t.TempDir(), "plan.net")
	if err := os.WriteFile(f, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// startPlanExporters starts an exporter on each of planExporterHosts,
// tracing the 15 other hosts every 2 s with link health on and planFile
// as its plan, waits for their first traces, and returns their addresses
// quoted, as Prometheus's targets.
func startPlanExporters(t *testing.T, fab *ibsimtest.Fabric, lifetime time.Duration, planFile string) []string {
	t.Helper()
	_, targets := startMeshExporters(t, fab, lifetime, planExporterHosts,
		fmt.Sprintf("interval: 2s\ntimeout: 300ms\nretries: 1\nhealth: {enabled: true}\nplan: %q\n", planFile))
	return targets
}

// startPlanPrometheus starts Prometheus over targets with the shipped
// rules scaled (startScaledPrometheus), waits until it holds every
// exporter's plan counts, and returns its address.
func startPlanPrometheus(t *testing.T, prom string, lifetime time.Duration, targets []string) string {
	t.Helper()
	promAddr := startScaledPrometheus(t, prom, lifetime, targets, `ibtracer_plan_links{status="planned"} > 0`)
	checkRuleLoaded(t, promAddr, planAlert)
	return promAddr
}

// startScaledPrometheus starts Prometheus scraping targets every second
// and evaluating the shipped rules scaled by fleetScale, waits until it
// has scraped every exporter a few times and, where ready is not empty,
// until ready gives one series per target, and returns its address.
func startScaledPrometheus(t *testing.T, prom string, lifetime time.Duration, targets []string, ready string) string {
	t.Helper()
	dir := t.TempDir()
	ruleFiles := writeShippedRules(t, dir, func(b []byte) []byte { return scaleRules(t, b, fleetScale) })
	promAddr := freePort(t)
	promCfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [%s]
scrape_configs:
  - job_name: ibtracer
    static_configs:
      - targets: [%s]
`, ruleFiles, strings.Join(targets, ", "))
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(promCfg), 0o644); err != nil {
		t.Fatal(err)
	}
	startDaemonFor(t, lifetime, dir, prom, "--config.file=prometheus.yml", "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+promAddr)
	if !poll(30*time.Second, 500*time.Millisecond, func() bool {
		n, err := promtest.Query(promAddr, `count_over_time(up[1m]) >= 5`)
		if err != nil || n != len(targets) {
			return false
		}
		if ready == "" {
			return true
		}
		m, err := promtest.Query(promAddr, ready)
		return err == nil && m == len(targets)
	}) {
		t.Fatalf("Prometheus did not scrape the %d exporters (ready: %q)", len(targets), ready)
	}
	return promAddr
}

// checkRuleLoaded fails unless Prometheus has loaded the alerting rule
// name and evaluates it without error.
func checkRuleLoaded(t *testing.T, promAddr, name string) {
	t.Helper()
	var state string
	ok := poll(10*time.Second, 500*time.Millisecond, func() bool {
		resp, err := http.Get("http://" + promAddr + "/api/v1/rules?type=alert")
		if err != nil {
			state = err.Error()
			return false
		}
		defer resp.Body.Close()
		var r struct {
			Data struct {
				Groups []struct {
					Name  string `json:"name"`
					Rules []struct {
						Name      string `json:"name"`
						Health    string `json:"health"`
						LastError string `json:"lastError"`
					} `json:"rules"`
				} `json:"groups"`
			} `json:"data"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
			state = err.Error()
			return false
		}
		for _, g := range r.Data.Groups {
			for _, rule := range g.Rules {
				if rule.Name == name {
					state = fmt.Sprintf("group %s, health %q %s", g.Name, rule.Health, rule.LastError)
					return rule.Health == "ok"
				}
			}
		}
		state = "not loaded"
		return false
	})
	if !ok {
		t.Fatalf("alerting rule %s: %s", name, state)
	}
	t.Logf("alerting rule %s: %s", name, state)
}

// planAlerts returns Prometheus's IBTracerLinkNotAsPlanned alerts, pending
// and firing.
func planAlerts(t *testing.T, promAddr string) []promAlert {
	t.Helper()
	var out []promAlert
	for _, a := range promAlerts(t, promAddr) {
		if a.Labels["alertname"] == planAlert {
			out = append(out, a)
		}
	}
	return out
}

// checkAsPlanned: the fabric as planned, for 35 s (longer than the scaled
// for:, 30 s): no exporter has a link not as planned, no
// ibtracer_link_plan_status series, no IBTracerLinkNotAsPlanned alert.
func checkAsPlanned(t *testing.T, promAddr string) {
	t.Helper()
	start := time.Now()
	seen := map[string]string{}
	var faults []string
	poll(35*time.Second, time.Second, func() bool {
		for _, a := range planAlerts(t, promAddr) {
			seen[a.key()] = a.State + ": " + a.Annotations["summary"]
		}
		for _, q := range []string{`ibtracer_link_plan_status`, `ibtracer_plan_links{status!="planned"} > 0`} {
			if n, err := promtest.Query(promAddr, q); err != nil || n > 0 {
				faults = append(faults, fmt.Sprintf("+%v %s: %d series, %v", time.Since(start).Round(time.Second), q, n, err))
			}
		}
		return false
	})
	if len(faults) > 0 {
		t.Errorf("as planned: links not as planned:\n  %s", strings.Join(faults, "\n  "))
	}
	if len(seen) > 0 {
		var ks []string
		for k, s := range seen {
			ks = append(ks, s+" "+k)
		}
		sort.Strings(ks)
		t.Errorf("as planned: %s pending or firing, want none:\n  %s", planAlert, strings.Join(ks, "\n  "))
	}
	n, _ := promtest.Query(promAddr, `ibtracer_plan_links{status="planned"} > 0`)
	t.Logf("as planned, %v: no %s, no link_plan_status series; %d exporters judge their links planned", time.Since(start).Round(time.Second), planAlert, n)
	checkNotSeenBound(t, promAddr)
}

// checkNotSeenBound: the fleet's bound on the planned links no exporter
// crosses (docs/runbook.md, IBTracerLinkNotAsPlanned, "Not seen"):
// min(ibtracer_plan_links_not_crossed). The plan has the SM host's cable
// (ibnetdiscover saw it), which no exporter traces, so the bound is at
// least 1; each exporter here traces the 15 other hosts, over both
// spines of every leaf, and crosses every other planned link: the bound
// is 1.
func checkNotSeenBound(t *testing.T, promAddr string) {
	t.Helper()
	per := queryValues(t, promAddr, `ibtracer_plan_links_not_crossed`)
	bound := queryValues(t, promAddr, `min(ibtracer_plan_links_not_crossed)`)
	planned := queryValues(t, promAddr, `ibtracer_plan_links{status="planned"}`)
	t.Logf("planned links crossed by each exporter: %v; not crossed: %v; the fleet's bound on the links none crosses: %v", planned, per, bound)
	if len(per) != len(planExporterHosts) || len(bound) != 1 || bound[""] != 1 {
		t.Errorf("not seen: per exporter %v, min %v: want one value per exporter and a min of 1 (the SM host's cable)", per, bound)
	}
}

// queryValues runs the instant query expr and returns its samples by
// instance ("" for a series without one).
func queryValues(t *testing.T, promAddr, expr string) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + promAddr + "/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Data struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	out := map[string]float64{}
	for _, s := range r.Data.Result {
		v, _ := s.Value[1].(string)
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("%s: value %v: %v", expr, s.Value[1], err)
		}
		out[s.Metric["instance"]] = f
	}
	return out
}

// swapWants is where the plan cables each end of L1's two spine cables
// (ibnetdiscover's "NAME"[PORT]), as the alerts' want and remote_want
// must say once they are swapped.
var swapWants = map[string]string{
	"L1[5]": `"S0"[2]`, "L1[6]": `"S1"[2]`,
	"S0[2]": `"L1"[5]`, "S1[2]": `"L1"[6]`,
}

// swappedLink is one alert's found link as "A[P] - B[Q]", its ends
// sorted, and its ends' wants as "END -> WANT", sorted.
func swappedLink(a promAlert) (link string, wants []string) {
	l := a.Labels
	near, far := l["node_name"]+"["+l["port"]+"]", l["remote_node_name"]+"["+l["remote_port"]+"]"
	ends := []string{near, far}
	sort.Strings(ends)
	wants = []string{near + " -> " + l["want"], far + " -> " + l["remote_want"]}
	sort.Strings(wants)
	return ends[0] + " - " + ends[1], wants
}

// checkSwappedCables swaps L1's two spine cables and checks that exactly
// two IBTracerLinkNotAsPlanned alerts fire, one per cable, naming where
// the plan cables each end.
func checkSwappedCables(t *testing.T, fab *ibsimtest.Fabric, promAddr string) {
	t.Helper()
	start := time.Now()
	for _, c := range []string{`Unlink "L1"[5]`, `Unlink "L1"[6]`, `Link "L1"[5] "S1"[2]`, `Link "L1"[6] "S0"[2]`} {
		if err := fab.Console(c); err != nil {
			t.Fatal(err)
		}
	}
	firing := map[string]promAlert{}
	activeAts := map[string]map[time.Time]bool{}
	pending := map[string]string{}
	var secondAt time.Time
	watch := func() bool {
		for _, a := range planAlerts(t, promAddr) {
			if a.State != "firing" {
				pending[a.key()] = a.Annotations["summary"]
				continue
			}
			if _, ok := firing[a.key()]; !ok {
				t.Logf("+%v firing: %s", time.Since(start).Round(time.Second), a.Annotations["summary"])
			}
			firing[a.key()] = a
			if activeAts[a.key()] == nil {
				activeAts[a.key()] = map[time.Time]bool{}
			}
			activeAts[a.key()][a.ActiveAt] = true
		}
		if len(firing) >= 2 && secondAt.IsZero() {
			secondAt = time.Now()
		}
		return !secondAt.IsZero() && time.Since(secondAt) > 10*time.Second
	}
	if !poll(100*time.Second, time.Second, watch) {
		t.Errorf("swapped cables: %d %s alert(s) fired in %v, want 2 (pending seen: %v)", len(firing), planAlert,
			time.Since(start).Round(time.Second), pending)
	}
	t.Logf("swapped cables: %d %s alert(s) firing %v after the swap (the second at +%v)", len(firing), planAlert,
		time.Since(start).Round(time.Second), secondAt.Sub(start).Round(time.Second))
	checkSwapAlerts(t, firing, activeAts)
}

// checkSwapAlerts checks the alerts that fired for the swapped cables:
// two, one per cable (S0[2] - L1[6] and L1[5] - S1[2]), miswired, each
// once, each naming where the plan cables both its ends.
func checkSwapAlerts(t *testing.T, firing map[string]promAlert, activeAts map[string]map[time.Time]bool) {
	t.Helper()
	links := map[string]int{}
	for k, a := range firing {
		link, wants := swappedLink(a)
		links[link]++
		if a.Labels["status"] != "miswired" {
			t.Errorf("%s: status %q, want miswired", link, a.Labels["status"])
		}
		if len(activeAts[k]) != 1 {
			t.Errorf("%s fired %d times (activeAt %v), want once", link, len(activeAts[k]), activeAts[k])
		}
		for _, w := range wants {
			end, want, _ := strings.Cut(w, " -> ")
			if want != swapWants[end] {
				t.Errorf("%s: %s should go to %q, the alert says %q", link, end, swapWants[end], want)
			}
			if s := a.Annotations["summary"]; !strings.Contains(s, end+" should go to "+want) {
				t.Errorf("%s: the summary does not say %s should go to %s: %s", link, end, want, s)
			}
		}
	}
	for _, want := range []string{"L1[5] - S1[2]", "L1[6] - S0[2]"} {
		if links[want] != 1 {
			t.Errorf("swapped cables: %d alert(s) for %s, want 1; fired: %v", links[want], want, links)
		}
	}
	if len(firing) != 2 {
		t.Errorf("swapped cables: %d alerts fired, want 2: %v", len(firing), links)
	}
}
