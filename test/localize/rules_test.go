package localizeeval

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/internal/promtest"
	"github.com/ibtracer/ibtracer_exporter/localize"
)

// The fleet verdict of eval_test.go is computed in Go, as the
// recording rules and IBTracerLinkSuspected compute it in Prometheus.
// checkRulesAgree proves the mirror on a trial: it writes every
// exporter's evidence series of the trial's last interval into a promtool
// unit test of dashboards/ibtracer.shard.rules.yml and ibtracer.rules.yml that expects the Go
// verdict's top suspect (topk(1, ibtracer:link_suspicion:score)) and the
// links the alert fires for (ALERTS), and runs promtool.

// locLabels are a link's labels in a series selector.
func locLabels(l localize.Link) string {
	v := l.Labels()
	return fmt.Sprintf(`node_guid="%s",port="%s",remote_node_guid="%s",remote_port="%s"`, v[0], v[1], v[2], v[3])
}

// promValue is v as promtool's series notation reads it (no exponent: an
// "e" or "x" would be taken for its expansions).
func promValue(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// rulesTest is the promtool unit test of one interval's evidence: the
// series, constant for 5 minutes (the alert's for: is 2m), then what Go
// expects at 4m.
// top nil: no link has a score; the zero link: do not compare the top.
func rulesTest(shardRules, rules string, exps []exporterEvidence, top *localize.Link, alerted []localize.Link) string {
	var b strings.Builder
	fmt.Fprintf(&b, "rule_files:\n- %s\n- %s\ngroup_eval_order: [ibtracer-shard, ibtracer-shard-links, ibtracer, ibtracer-health, ibtracer-congestion, ibtracer-localize]\nevaluation_interval: 1m\ntests:\n- interval: 1m\n  input_series:\n", shardRules, rules)
	for i, e := range exps {
		inst := fmt.Sprintf(`instance="e%02d:9684",job="ibtracer"`, i)
		fmt.Fprintf(&b, "  - series: 'ibtracer_evidence_bad_paths{%s}'\n    values: %dx5\n", inst, e.badPaths)
		for _, le := range e.links {
			if le.BadPaths == 0 {
				continue // as the exporter: only links with a bad path
			}
			fmt.Fprintf(&b, "  - series: 'ibtracer_link_bad_paths{%s,%s}'\n    values: %dx5\n", inst, locLabels(le.Link), le.BadPaths)
			fmt.Fprintf(&b, "  - series: 'ibtracer_link_suspicion{%s,%s}'\n    values: %sx5\n", inst, locLabels(le.Link), promValue(le.Suspicion))
		}
	}
	b.WriteString("  promql_expr_test:\n")
	switch {
	case top == nil:
		b.WriteString("  - expr: ibtracer:link_suspicion:score\n    eval_time: 4m\n    exp_samples: []\n")
	case *top != (localize.Link{}):
		b.WriteString("  - expr: count by (node_guid, port, remote_node_guid, remote_port) (topk(1, ibtracer:link_suspicion:score))\n    eval_time: 4m\n    exp_samples:\n")
		fmt.Fprintf(&b, "    - labels: '{%s}'\n      value: 1\n", locLabels(*top))
	}
	b.WriteString("  - expr: ALERTS{alertname=\"IBTracerLinkSuspected\",alertstate=\"firing\"}\n    eval_time: 4m\n    exp_samples:\n")
	for _, l := range alerted {
		fmt.Fprintf(&b, "    - labels: 'ALERTS{alertname=\"IBTracerLinkSuspected\",alertstate=\"firing\",severity=\"warning\",%s}'\n      value: 1\n", locLabels(l))
	}
	return b.String()
}

// checkRulesAgree runs promtool on the evidence of the fleet's last
// interval (st.last) against the Go verdict on ev, the same interval's
// fleet evidence.
func checkRulesAgree(t *testing.T, st *fleetState, ev map[localize.Link]*fleetLinkEvidence, what string) {
	t.Helper()
	promtool := promtest.RequireTool(t, "promtool", "prometheus")
	rules, err := filepath.Abs(filepath.Join("..", "..", "dashboards", "ibtracer.rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	shardRules, err := filepath.Abs(filepath.Join("..", "..", "dashboards", "ibtracer.shard.rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	ranked := fleetVerdict.rank(ev)
	var top *localize.Link
	if len(ranked) > 0 {
		top = &ranked[0]
	}
	if len(ranked) > 1 && ev[ranked[0]].suspicion == ev[ranked[1]].suspicion {
		t.Logf("%s: two links share the top score: topk(1) may pick either, the top is not compared", what)
		top = &localize.Link{}
	}
	alerted := fleetVerdict.blamed(ev, ranked)
	file := filepath.Join(t.TempDir(), "verdict.test.yml")
	if err := os.WriteFile(file, []byte(rulesTest(shardRules, rules, st.last, top, alerted)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(promtool, "test", "rules", file).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "SUCCESS") {
		t.Errorf("%s: the rules do not agree with the Go verdict (top %v, alerted %v): %v\n%s", what, ranked[:min(len(ranked), 1)], alerted, err, out)
	}
}
