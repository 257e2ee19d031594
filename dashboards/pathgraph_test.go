package dashboards

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/prometheus"

	"github.com/ibtracer/ibtracer_exporter/internal/promtest"
)

// TestPathGraphQueries: the node graph's queries, run by promtool on two
// paths to one destination that share the spine and the destination's
// link, give one node per source and per node GUID, coloured by the worst
// verdict, and one edge per link with the number of paths crossing it.
//
//	a:9684 -> leaf1 (in 1, out 3) -> spine (in 1, out 2) -> db (in 1)
//	b:9684 -> leaf2 (in 1, out 3) -> spine (in 2, out 2) -> db (in 1)
//
// Verdicts: every hop of a's path validated (the switches by their SMA,
// db by its agent); on b's, leaf2 has no agent (validate: agent) and the
// spine's SMA reports a port mismatch.
func TestPathGraphQueries(t *testing.T) {
	promtool := promtest.RequireTool(t, "promtool", "prometheus")
	d := shippedDashboard(t)
	var nodesExpr, edgesExpr string
	for _, p := range allPanels(d) {
		if p.Type != "nodeGraph" {
			continue
		}
		for _, q := range p.Targets {
			pq := q.(*prometheus.Dataquery)
			switch *pq.RefId {
			case "A":
				nodesExpr = pq.Expr
			case "B":
				edgesExpr = pq.Expr
			}
		}
	}
	if nodesExpr == "" || edgesExpr == "" {
		t.Fatal("no nodeGraph panel with queries A (nodes) and B (edges)")
	}
	vars := strings.NewReplacer("$job", ".*", "$instance", ".*", "$destination", ".*", "$switch", ".*", "$guid", ".*")

	type hop struct{ n, guid, desc, typ, in, out, verdict, by string }
	paths := map[string][]hop{
		"a:9684": {{"1", "0x01", "leaf1", "Switch", "1", "3", "validated", "sma"}, {"2", "0x02", "spine", "Switch", "1", "2", "validated", "sma"},
			{"3", "0x03", "db HCA-1", "CA", "1", "0", "validated", "agent"}},
		"b:9684": {{"1", "0x04", "leaf2", "Switch", "1", "3", "unsupported", "agent"}, {"2", "0x02", "spine", "Switch", "2", "2", "mismatch", "sma"},
			{"3", "0x03", "db HCA-1", "CA", "1", "0", "validated", "agent"}},
	}
	var in strings.Builder
	for _, inst := range []string{"a:9684", "b:9684"} {
		base := fmt.Sprintf(`instance="%s",job="ibtracer",dest="db"`, inst)
		fmt.Fprintf(&in, "  - series: 'ibtracer_destination_info{%s,address=\"lid 3\",ibtracer_args=\"-l 3\"}'\n    values: 1x5\n", base)
		for _, h := range paths[inst] {
			fmt.Fprintf(&in, "  - series: 'ibtracer_hop_info{%s,hop=\"%s\",node_guid=\"%s\",port_guid=\"%s\",node_desc=\"%s\",node_type=\"%s\",lid=\"%s\",in_port=\"%s\",out_port=\"%s\"}'\n    values: 1x5\n",
				base, h.n, h.guid, h.guid, h.desc, h.typ, h.n, h.in, h.out)
			fmt.Fprintf(&in, "  - series: 'ibtracer_hop_verdict{%s,hop=\"%s\",verdict=\"%s\",validated_by=\"%s\"}'\n    values: 1x5\n",
				base, h.n, h.verdict, h.by)
		}
	}
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	test := fmt.Sprintf(`rule_files: []
evaluation_interval: 1m
tests:
- interval: 1m
  input_series:
%s  promql_expr_test:
  - expr: %s
    eval_time: 2m
    exp_samples:
    - {labels: '{id="a:9684",title="a:9684",subtitle="source"}', value: -1}
    - {labels: '{id="b:9684",title="b:9684",subtitle="source"}', value: -1}
    - {labels: '{id="0x01",title="leaf1",subtitle="Switch"}', value: 0}
    - {labels: '{id="0x04",title="leaf2",subtitle="Switch"}', value: 1}
    - {labels: '{id="0x02",title="spine",subtitle="Switch"}', value: 3}
    - {labels: '{id="0x03",title="db HCA-1",subtitle="CA"}', value: 0}
  - expr: %s
    eval_time: 2m
    exp_samples:
    - {labels: '{id="a:9684//0x01/1",source="a:9684",target="0x01",dst_port="1"}', value: 1}
    - {labels: '{id="b:9684//0x04/1",source="b:9684",target="0x04",dst_port="1"}', value: 1}
    - {labels: '{id="0x01/3/0x02/1",source="0x01",src_port="3",target="0x02",dst_port="1"}', value: 1}
    - {labels: '{id="0x04/3/0x02/2",source="0x04",src_port="3",target="0x02",dst_port="2"}', value: 1}
    - {labels: '{id="0x02/2/0x03/1",source="0x02",src_port="2",target="0x03",dst_port="1"}', value: 2}
`, in.String(), q(vars.Replace(nodesExpr)), q(vars.Replace(edgesExpr)))
	file := filepath.Join(t.TempDir(), "pathgraph.test.yml")
	if err := os.WriteFile(file, []byte(test), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(promtool, "test", "rules", file).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
}
