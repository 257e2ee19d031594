package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/agent"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
)

// requireTool finds a program or skips (fails under CI=true).
func requireTool(t *testing.T, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing: apt-get install %s", name, pkg)
		}
		t.Skipf("%s is missing (Debian %s)", name, pkg)
	}
	return p
}

// startDaemon runs a program for the rest of the test, in its own dir.
func startDaemon(t *testing.T, dir, bin string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	out, _ := os.Create(filepath.Join(dir, filepath.Base(bin)+".log"))
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		cancel()
		out.Close()
		if t.Failed() {
			b, _ := os.ReadFile(out.Name())
			if len(b) > 3000 {
				b = b[len(b)-3000:]
			}
			t.Logf("%s log:\n%s", bin, b)
		}
	})
}

// webhook collects the alerts Alertmanager posts.
type webhook struct {
	mu     sync.Mutex
	firing map[string]bool // "alertname/destination"
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
			w.firing[a.Labels["alertname"]+"/"+a.Labels["destination"]] = true
		}
	}
}

func (w *webhook) wait(t *testing.T, key string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		w.mu.Lock()
		ok := w.firing[key]
		w.mu.Unlock()
		if ok {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	t.Fatalf("alert %s did not reach the webhook within %v; received: %v", key, d, w.firing)
}

func promQuery(t *testing.T, addr, expr string) (int, error) {
	resp, err := http.Get("http://" + addr + "/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return 0, err
	}
	if r.Status != "success" {
		return 0, fmt.Errorf("%s", r.Error)
	}
	return len(r.Data.Result), nil
}

var forRe = regexp.MustCompile(`(?m)^(\s*)for: \S+$`)

// TestPrometheusAlertmanagerEndToEnd: a real Prometheus scrapes the
// exporter every second with the shipped rules (for: shortened), a real
// Alertmanager posts to a webhook served here. Unlinking a link on a
// traced path brings IBTracerPathChanged; stopping the agent on a
// destination brings IBTracerAgentMissing. Every dashboard query returns
// data from that Prometheus.
func TestPrometheusAlertmanagerEndToEnd(t *testing.T) {
	ibsimtest.Require(t)
	prom := requireTool(t, "prometheus", "prometheus")
	am := requireTool(t, "prometheus-alertmanager", "prometheus-alertmanager")
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "two-switch.net"), ibsimtest.Options{KeepSM: true, SMHost: true, SweepSeconds: 1})
	startAgents(t, fab, "host2")
	agentTr := fab.Dial("host4", true)
	agentEngine := ibmad.NewEngine(agentTr, ibmad.Options{})
	if _, err := agent.New(agentEngine, agent.Config{}); err != nil {
		t.Fatal(err)
	}
	lids := lidsOf(t, fab, "host1")
	cfg := fmt.Sprintf("interval: 1s\ntimeout: 200ms\nretries: 1\ndestinations:\n  - {name: far, lid: %d}\n  - {name: far2, lid: %d}\n  - {name: near, lid: %d}\n",
		lids["host2"], lids["host4"], lids["host3"])
	exp := startExporter(t, []string{"IBSIM_SOCKNAME=" + fab.SockName}, cfg, "--ib.transport=ibsim", "--ibsim.node=host1")
	exp.waitFor(30*time.Second, "first traces", allTraced("far", "far2", "near"))

	hook := &webhook{firing: map[string]bool{}}
	hs := httptest.NewServer(hook)
	defer hs.Close()
	dir := t.TempDir()
	amAddr, promAddr := freePort(t), freePort(t)
	amCfg := fmt.Sprintf(`route:
  receiver: test
  group_by: [alertname, destination]
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
	rules, err := os.ReadFile(filepath.Join(root, "dashboards/ibtracer.rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(dir, "rules.yml"), forRe.ReplaceAll(rules, []byte("${1}for: 0s")), 0o644)
	promCfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [rules.yml]
alerting:
  alertmanagers:
    - static_configs:
        - targets: ["%s"]
scrape_configs:
  - job_name: ibtracer
    static_configs:
      - targets: ["%s"]
`, amAddr, exp.addr)
	_ = os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(promCfg), 0o644)
	startDaemon(t, dir, prom, "--config.file=prometheus.yml", "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+promAddr)

	// Prometheus has scraped a few times.
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, err := promQuery(t, promAddr, `count_over_time(ibtracer_path_hops{destination="far"}[1m]) >= 5`)
		if err == nil && n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus did not scrape the exporter: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}

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
	vars := strings.NewReplacer("$job", ".*", "$instance", ".*", "$destination", ".*", "$__rate_interval", "10s")
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
			n, err := promQuery(t, promAddr, vars.Replace(tg.Expr))
			if err != nil || n == 0 {
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
	hook.wait(t, "IBTracerPathChanged/far", 60*time.Second)

	// The agent on far2's destination stops: IBTracerAgentMissing.
	agentEngine.Close()
	hook.wait(t, "IBTracerAgentMissing/far2", 60*time.Second)
}

// TestAlertRules runs promtool's checks and unit tests of the shipped rules.
func TestAlertRules(t *testing.T) {
	promtool := requireTool(t, "promtool", "prometheus")
	for _, args := range [][]string{{"check", "rules", filepath.Join(root, "dashboards/ibtracer.rules.yml")}, {"test", "rules", filepath.Join(root, "dashboards/ibtracer.rules.test.yml")}} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "SUCCESS") {
			t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestSystemdUnit: systemd-analyze verify passes on the shipped unit (with
// ExecStart pointing at a built binary) and reports its exposure.
func TestSystemdUnit(t *testing.T) {
	sa := requireTool(t, "systemd-analyze", "systemd")
	bin, _ := binaries(t)
	unit, err := os.ReadFile(filepath.Join(root, "examples/systemd/ibtracer_exporter.service"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	local := strings.Replace(string(unit), "/usr/local/bin/ibtracer_exporter", bin, 1)
	path := filepath.Join(dir, "ibtracer_exporter.service")
	if err := os.WriteFile(path, []byte(local), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(sa, "verify", path).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) != 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
	out, _ = exec.Command(sa, "security", "--offline=true", path).CombinedOutput()
	m := regexp.MustCompile(`Overall exposure level for \S+: ([0-9.]+) (\S+)`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("no exposure figure:\n%s", out)
	}
	t.Logf("systemd-analyze security: exposure %s %s", m[1], m[2])
	if m[2] != "OK" {
		t.Fatalf("exposure %s %s, want OK", m[1], m[2])
	}
}
