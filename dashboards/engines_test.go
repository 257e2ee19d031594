package dashboards

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/internal/promtest"
)

// ruleFiles are every rule file shipped in this directory (the unit
// tests, *.rules.test.yml, are not rule files).
func ruleFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.rules.yml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no *.rules.yml here: %v", err)
	}
	return files
}

// TestRulesLoadInEveryEngine: every rule file loads in the engines a site
// evaluates them with (docs/metrics.md, "Where the rules run"):
// Prometheus (promtool check rules) and VictoriaMetrics' vmalert, in
// dry-run mode, which parses the rules, their expressions (MetricsQL)
// and their templates. Debian's vmalert is 1.79, which refuses fields
// it does not know, e.g. keep_firing_for.
func TestRulesLoadInEveryEngine(t *testing.T) {
	promtool := promtest.RequireTool(t, "promtool", "prometheus")
	vmalert := promtest.RequireTool(t, "vmalert", "victoria-metrics")
	for _, f := range ruleFiles(t) {
		out, err := exec.Command(promtool, "check", "rules", f).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "SUCCESS") {
			t.Errorf("promtool check rules %s: %v\n%s", f, err, out)
		}
		// -dryRun checks and exits; the flags make its checks explicit.
		out, err = exec.Command(vmalert, "-dryRun", "-rule="+f,
			"-rule.validateExpressions=true", "-rule.validateTemplates=true").CombinedOutput()
		if err != nil {
			t.Errorf("vmalert -dryRun -rule=%s: %v\n%s", f, err, lastLines(string(out), 6))
		}
	}
}

// lastLines is the end of a program's log: vmalert's reason is last.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
