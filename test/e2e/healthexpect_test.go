package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/internal/promtest"
)

// degradedVerdicts are the link verdicts IBTracerLinkDegraded fires on.
var degradedVerdicts = []string{"not_active", "below_expected", "width_degraded", "speed_degraded"}

// degradedLinks counts the link_status series of body with a degraded
// verdict, and returns them.
func degradedLinks(body string) (int, []string) {
	var bad []string
	for _, l := range strings.Split(grepMetrics(body, "ibtracer_link_status{"), "\n") {
		for _, v := range degradedVerdicts {
			if strings.Contains(l, `verdict="`+v+`"`) && strings.HasSuffix(l, " 1") {
				bad = append(bad, l)
			}
		}
	}
	return len(bad), bad
}

// healthExporters starts one exporter at each of nodes on fab, with the
// health section health, tracing every other host, and waits until each
// has traced them all and judged links.
func healthExporters(t *testing.T, f *ibsimtest.Fabric, nodes []string, lids map[string]uint16, health string) []*exporterProc {
	t.Helper()
	var exps []*exporterProc
	for _, n := range nodes {
		var dests, names []string
		for _, h := range []string{"host1", "host2", "host3", "host4"} {
			if h != n {
				dests = append(dests, fmt.Sprintf("  - {name: %s, lid: %d}", h, lids[h]))
				names = append(names, h)
			}
		}
		cfg := fmt.Sprintf("interval: 1s\ntimeout: 200ms\nretries: 1\nhealth: %s\ndestinations:\n%s\n", health, strings.Join(dests, "\n"))
		e := startIbsimExporter(t, f, n, cfg)
		e.waitFor(60*time.Second, "first traces and link verdicts", func(m string) bool {
			return allTraced(names...)(m) && strings.Contains(m, "ibtracer_link_status{")
		})
		exps = append(exps, e)
	}
	return exps
}

// TestHealthyIbsimFabricHasNoDegradedLink: ibsim's ports all say they
// support 12X (and its links train at 4X SDR), so by iblinkinfo's "could
// be" every link is width_degraded. With the site's cabling stated
// (expect_width: 4x, expect_speed: SDR), that expectation is the
// standard: three exporters tracing every host of two-switch.net on
// ibsim report no degraded link, and a Prometheus evaluating the rules
// (for: 0s) holds no link-health alert, pending or firing. Without the
// expectation the same exporters do report degraded links (the "could
// be" comparison stays), which shows the check can fail.
func TestHealthyIbsimFabricHasNoDegradedLink(t *testing.T) {
	skipShort(t)
	prom := promtest.RequireTool(t, "prometheus", "prometheus")
	f, lids := startTwoSwitch(t)
	nodes := []string{"host1", "host2", "host3"}

	plain := healthExporters(t, f, []string{"host4"}, lids, "{enabled: true, counters: false}")
	if n, _ := degradedLinks(plain[0].waitFor(10*time.Second, "link verdicts", func(string) bool { return true })); n == 0 {
		t.Fatal("without expectations no link is degraded: ibsim's 12X \"could be\" should make them width_degraded")
	}

	exps := healthExporters(t, f, nodes, lids, "{enabled: true, counters: false, expect_width: 4x, expect_speed: SDR}")
	var targets []string
	for _, e := range exps {
		m := e.waitFor(10*time.Second, "link verdicts", func(string) bool { return true })
		if n, bad := degradedLinks(m); n != 0 {
			t.Fatalf("exporter %s: %d degraded links with expect_width 4x, expect_speed SDR:\n%s", e.addr, n, strings.Join(bad, "\n"))
		}
		if !strings.Contains(m, `verdict="ok"} 1`) {
			t.Fatalf("exporter %s: no ok link:\n%s", e.addr, grepMetrics(m, "ibtracer_link_status{"))
		}
		targets = append(targets, fmt.Sprintf("%q", e.addr))
	}

	dir := t.TempDir()
	promAddr := freePort(t)
	ruleFiles := writeShippedRules(t, dir, func(b []byte) []byte { return forRe.ReplaceAll(b, []byte("${1}for: 0s")) })
	promCfg := fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files: [%s]\n"+
		"scrape_configs:\n  - job_name: ibtracer\n    static_configs:\n      - targets: [%s]\n", ruleFiles, strings.Join(targets, ", "))
	_ = os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(promCfg), 0o644)
	startDaemon(t, dir, prom, "--config.file=prometheus.yml", "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+promAddr)
	// Every exporter scraped several times, the rules evaluated after.
	var err error
	if !poll(60*time.Second, 200*time.Millisecond, func() bool {
		var n int
		n, err = promtest.Query(promAddr, `count by (instance) (count_over_time(ibtracer_link_status[1m]) >= 5)`)
		return err == nil && n == len(exps)
	}) {
		t.Fatalf("Prometheus did not scrape the %d exporters: %v", len(exps), err)
	}
	time.Sleep(3 * time.Second) // a few rule evaluations
	n, err := promtest.Query(promAddr, `ALERTS{alertname=~"IBTracerLink.*|IBTracerPathRateDropped"}`)
	if err != nil || n != 0 {
		t.Fatalf("%d link-health alerts (pending or firing) on a healthy fabric: %v", n, err)
	}
	n, err = promtest.Query(promAddr, `ibtracer_link_status{verdict=~"`+strings.Join(degradedVerdicts, "|")+`"} == 1`)
	if err != nil || n != 0 {
		t.Fatalf("Prometheus holds %d degraded link series: %v", n, err)
	}
	n, err = promtest.Query(promAddr, `ibtracer_link_status{verdict="ok"} == 1`)
	if err != nil || n == 0 {
		t.Fatalf("Prometheus holds no ok link: %v", err)
	}
	t.Logf("%d exporters, %d ok link series in Prometheus, no link-health alert", len(exps), n)
}
