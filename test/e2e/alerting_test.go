package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/agent"
	"github.com/ibtracer/ibtracer_exporter/internal/promtest"
)

// webhook collects the alerts Alertmanager posts.
type webhook struct {
	mu     sync.Mutex
	firing map[string]bool // "alertname/dest", or "alertname/node_desc"
}

func (w *webhook) ServeHTTP(_ http.ResponseWriter, r *http.Request) {
	var msg struct {
		Alerts []struct {
			Status string            `json:"status"`
			Labels map[string]string `json:"labels"`
		} `json:"alerts"`
	}
	if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, a := range msg.Alerts {
		if a.Status == "firing" {
			// A destination's alert by its dest, a node's by its name.
			w.firing[a.Labels["alertname"]+"/"+a.Labels["dest"]+a.Labels["node_desc"]] = true
		}
	}
}

func (w *webhook) wait(t *testing.T, key string, d time.Duration) {
	t.Helper()
	if poll(d, 200*time.Millisecond, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.firing[key]
	}) {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	t.Fatalf("alert %s did not reach the webhook within %v; received: %v", key, d, w.firing)
}

var forRe = regexp.MustCompile(`(?m)^(\s*)for: \S+$`)

// TestPrometheusAlertmanagerEndToEnd: a real Prometheus scrapes the
// exporter every second with the shipped rules (for: shortened), a real
// Alertmanager posts to a webhook served here. Unlinking a link on a
// traced path brings IBTracerPathChanged (the link is down); stopping the agent on a
// destination brings IBTracerAgentMissing; unlinking a destination's only
// cable brings IBTracerDestinationUnreachable. Every dashboard query
// returns data from that Prometheus, and every label name the dashboard
// and the rules use is one of its series'.
func TestPrometheusAlertmanagerEndToEnd(t *testing.T) {
	skipShort(t)
	prom := promtest.RequireTool(t, "prometheus", "prometheus")
	am := promtest.RequireTool(t, "prometheus-alertmanager", "prometheus-alertmanager")
	fab, lids := startTwoSwitch(t)
	startAgents(t, fab, "host2")
	agentEngine := startAgent(t, fab, "host4", agent.Config{})
	cfg := fmt.Sprintf("interval: 1s\ntimeout: 200ms\nretries: 1\nhealth: {enabled: true}\nevidence: {enabled: true}\ndestinations:\n  - {name: far, lid: %d}\n  - {name: far2, lid: %d}\n  - {name: near, lid: %d}\n",
		lids["host2"], lids["host4"], lids["host3"])
	exp := startIbsimExporter(t, fab, "host1", cfg)
	exp.waitFor(30*time.Second, "first traces", allTraced("far", "far2", "near"))

	hook := &webhook{firing: map[string]bool{}}
	hs := httptest.NewServer(hook)
	defer hs.Close()
	dir := t.TempDir()
	amAddr, promAddr := freePort(t), freePort(t)
	amCfg := fmt.Sprintf(`route:
  receiver: test
  group_by: [alertname, dest]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: test
    webhook_configs:
      - url: %s
        send_resolved: false
`, hs.URL)
	_ = os.WriteFile(filepath.Join(dir, "alertmanager.yml"), []byte(amCfg), 0o644)
	startDaemon(t, dir, am, "--config.file=alertmanager.yml", "--storage.path="+filepath.Join(dir, "am"),
		"--web.listen-address="+amAddr, "--cluster.listen-address=")
	ruleFiles := writeShippedRules(t, dir, func(b []byte) []byte { return forRe.ReplaceAll(b, []byte("${1}for: 0s")) })
	promCfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [%s]
alerting:
  alertmanagers:
    - static_configs:
        - targets: ["%s"]
scrape_configs:
  - job_name: ibtracer
    static_configs:
      - targets: ["%s"]
`, ruleFiles, amAddr, exp.addr)
	_ = os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(promCfg), 0o644)
	startDaemon(t, dir, prom, "--config.file=prometheus.yml", "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+promAddr)

	// Prometheus has scraped a few times.
	var err error
	if !poll(30*time.Second, 200*time.Millisecond, func() bool {
		var n int
		n, err = promtest.Query(promAddr, `count_over_time(ibtracer_path_hops{dest="far"}[1m]) >= 5`)
		return err == nil && n == 1
	}) {
		t.Fatalf("Prometheus did not scrape the exporter: %v", err)
	}
	// A link that waits: the congestion series (and their vl label, which
	// IBTracerLinkCongested's description uses) reach Prometheus.
	congestSW2Port1(t, fab, promAddr)

	// Every query of the dashboard returns data, and no panel lacks a
	// query or a datasource.
	var dash struct {
		Panels []struct {
			Type       string         `json:"type"`
			Title      string         `json:"title"`
			Datasource map[string]any `json:"datasource"`
			Targets    []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	b, _ := os.ReadFile(filepath.Join(root, "dashboards/ibtracer.json"))
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	queries := 0
	vars := strings.NewReplacer("$job", ".*", "$instance", ".*", "$destination", ".*", "$switch", ".*", "$guid", ".*", "$__rate_interval", "10s", "$__range", "5m")
	for _, p := range dash.Panels {
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 || p.Datasource == nil {
			t.Errorf("panel %q has no query or no datasource", p.Title)
		}
		for _, tg := range p.Targets {
			if tg.Expr == "" {
				t.Errorf("panel %q has an empty query", p.Title)
				continue
			}
			n, err := promtest.Query(promAddr, vars.Replace(tg.Expr))
			// trace_failures_total has a series per reason only once that
			// reason occurred (docs/metrics.md, "Series budget"): on this
			// healthy fabric its panel is empty, but its query must run.
			if err != nil || (n == 0 && p.Title != "Trace failures by reason") {
				t.Errorf("panel %q: %s: %d series, %v", p.Title, tg.Expr, n, err)
			}
			queries++
		}
	}
	t.Logf("%d dashboard queries returned data", queries)

	// A link on far's path goes down: IBTracerPathChanged.
	port := exp.outPort("far", "sw1")
	if port == 0 {
		t.Fatal("no sw1 hop on far's path")
	}
	if err := fab.Console(fmt.Sprintf(`Unlink "sw1"[%d]`, port)); err != nil {
		t.Fatal(err)
	}
	// The SM re-routes far's path over the parallel link, and the
	// exporter reads the one it left down: one alert for that link
	// (labelled by its ends, no destination label).
	hook.wait(t, "IBTracerPathChanged/", 60*time.Second)

	// The agent on far2's destination stops: IBTracerAgentMissing.
	agentEngine.Close()
	hook.wait(t, "IBTracerAgentMissing/host4", 60*time.Second) // far2's node, by its description

	// near's only cable is pulled: its traces fail (port down, then no
	// route once OpenSM has swept), which trace_failures_total counts:
	// IBTracerDestinationUnreachable, and only for near.
	if err := fab.Console(`Unlink "sw1"[2]`); err != nil {
		t.Fatal(err)
	}
	hook.wait(t, "IBTracerDestinationUnreachable/near", 60*time.Second)
	hook.mu.Lock()
	defer hook.mu.Unlock()
	for _, d := range []string{"far", "far2"} {
		if hook.firing["IBTracerDestinationUnreachable/"+d] {
			t.Errorf("IBTracerDestinationUnreachable fired for %s, which stayed reachable", d)
		}
	}
	// Now that failures have series too.
	checkLabelNames(t, promAddr)
}

// TestAlertRules runs promtool's checks and unit tests of the shipped rules.
func TestAlertRules(t *testing.T) {
	skipShort(t)
	promtool := promtest.RequireTool(t, "promtool", "prometheus")
	for _, args := range [][]string{{"check", "rules", filepath.Join(root, "dashboards/ibtracer.shard.rules.yml"), filepath.Join(root, "dashboards/ibtracer.rules.yml")}, {"test", "rules", filepath.Join(root, "dashboards/ibtracer.rules.test.yml")}} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "SUCCESS") {
			t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
