package dashboards

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/internal/promtest"
)

// evalSeries is one input series of an evaluation scenario: its name
// with labels, and a value per minute (NaN: no sample). A clock series
// holds seconds since the scenario began, to which the engine's start
// time is added (ibtracer_last_trace_timestamp_seconds).
type evalSeries struct {
	name   string
	values []float64
	clock  bool
}

// evalCheck is what the alerts are at one minute: query (its result
// counted by alertname and dest) gives want, each "alertname" or
// "alertname/dest", sorted.
type evalCheck struct {
	minute int
	query  string
	want   []string
}

const (
	firingNow   = `count by (alertname, dest) (last_over_time(ALERTS{alertstate="firing"}[30s]))`
	firingSince = `count by (alertname, dest) (max_over_time(ALERTS{alertstate="firing"}[%dm]))`
)

// evalScenario: one exporter (n1) traces a..e for 180 minutes on a
// healthy fabric, every path over 2 hops, every round trip 40 us. At
// minute 150 the cable L1[5]-S1[1] is pulled: the paths to a and b move to
// S2, and come back to the hops they had at minute 156, when it is put
// back; from 151 to 155 n1 reads the link down (ibtracer_link_left_down,
// 2 paths); c's round trip rises to 900 us at 150 (22 times its
// baseline) and stays there. Nothing fires before 150; IBTracerPathChanged
// fires for the link, named by both ends, and ends with the fault (at
// 163 both path changes are within 10 minutes: the rules before issue 42
// still fired);
// IBTracerLatencyHigh fires for c (pending once c's 10-minute median is
// up, 5 minutes later firing).
func evalScenario() ([]evalSeries, []evalCheck, int) {
	const minutes, fault, repair = 180, 150, 156
	ser := func(name string, f func(m int) float64) evalSeries {
		v := make([]float64, minutes+1)
		for m := range v {
			v[m] = f(m)
		}
		return evalSeries{name: name, values: v}
	}
	nan := math.NaN()
	inst := `instance="n1:9684",job="ibtracer"`
	one := func(int) float64 { return 1 }
	s := []evalSeries{
		ser("up{"+inst+"}", one),
		ser("ibtracer_device_up{"+inst+"}", one),
		ser("ibtracer_interval_seconds{"+inst+"}", func(int) float64 { return 60 }),
	}
	for _, d := range []string{"a", "b", "c", "d", "e"} {
		l := inst + `,dest="` + d + `"`
		moves := d == "a" || d == "b"
		s = append(s,
			ser("ibtracer_trace_success{"+l+"}", one),
			ser("ibtracer_path_mismatched_hops{"+l+"}", func(int) float64 { return 0 }),
			ser("ibtracer_path_changes_total{"+l+"}", func(m int) float64 {
				switch {
				case !moves || m < fault:
					return 0
				case m < repair:
					return 1
				}
				return 2
			}),
			ser("ibtracer_last_latency_seconds{"+l+"}", func(m int) float64 {
				if d == "c" && m >= fault {
					return 900e-6
				}
				return 40e-6
			}),
		)
		ts := ser("ibtracer_last_trace_timestamp_seconds{"+l+"}", func(m int) float64 { return float64(60 * m) })
		ts.clock = true
		s = append(s, ts)
		hop := func(h int, node, guid string, out int) string {
			return fmt.Sprintf(`ibtracer_hop_info{%s,hop="%d",node_guid="%s",node_desc="%s",node_type="switch",in_port="1",out_port="%d"}`, l, h, guid, node, out)
		}
		if !moves {
			s = append(s, ser(hop(1, "L1", "0x0000000000a00001", 4), one), ser(hop(2, "S3", "0x0000000000b00003", 2), one))
			continue
		}
		before := func(m int) float64 {
			if m >= fault && m < repair {
				return nan
			}
			return 1
		}
		detour := func(m int) float64 {
			if m >= fault && m < repair {
				return 1
			}
			return nan
		}
		s = append(s,
			ser(hop(1, "L1", "0x0000000000a00001", 5), before), ser(hop(2, "S1", "0x0000000000b00001", 2), before),
			ser(hop(1, "L1", "0x0000000000a00001", 6), detour), ser(hop(2, "S2", "0x0000000000b00002", 2), detour))
	}
	link := `node_guid="0x0000000000a00001",port="5",remote_node_guid="0x0000000000b00001",remote_port="1"`
	down := func(v float64) func(m int) float64 {
		return func(m int) float64 {
			if m > fault && m < repair {
				return v
			}
			return nan
		}
	}
	s = append(s, ser("ibtracer_link_left_down{"+inst+","+link+"}", down(2)),
		ser("ibtracer_link_info{"+inst+","+link+`,node_desc="L1",remote_node_desc="S1",node_name="L1",remote_node_name="S1"}`, down(1)))
	checks := []evalCheck{
		{fault - 1, fmt.Sprintf(firingSince, fault), nil},
		{fault + 3, firingNow, []string{"IBTracerPathChanged"}},
		{repair + 7, firingNow, []string{"IBTracerLatencyHigh/c"}},
	}
	return s, checks, minutes
}

// TestRulesEvaluateInVictoriaMetrics: both rule files evaluate on
// VictoriaMetrics as on Prometheus (docs/metrics.md, "Where the rules
// run"). The scenario's series (evalScenario) go through promtool's rule
// unit tests (Prometheus's engine) and, imported into victoria-metrics
// (single node, /api/v1/import/prometheus), through vmalert 1.79 in
// replay mode, which evaluates the rules over their time range, one
// evaluation a minute, and writes the alerts (ALERTS) back; on both,
// nothing fires on the healthy fabric and the same alerts fire after the
// fault. vmalert replays each rule over the whole range before the next
// one, so an alert's expression never sees its own ALERTS: the holds
// (docs/metrics.md, "Alerts in a fleet") are not exercised here.
func TestRulesEvaluateInVictoriaMetrics(t *testing.T) {
	promtool := promtest.RequireTool(t, "promtool", "prometheus")
	vm := promtest.RequireTool(t, "victoria-metrics", "victoria-metrics")
	vmalert := promtest.RequireTool(t, "vmalert", "victoria-metrics")
	series, checks, minutes := evalScenario()
	t.Run("prometheus", func(t *testing.T) { evalOnPromtool(t, promtool, series, checks) })
	t.Run("victoriametrics", func(t *testing.T) {
		// The scenario ends 10 minutes ago, its minutes on whole minutes
		// (vmalert's replay steps are).
		start := time.Now().Add(-time.Duration(minutes+10) * time.Minute).Truncate(time.Minute)
		addr := startVictoriaMetrics(t, vm)
		importSeries(t, addr, series, start)
		replayRules(t, vmalert, addr, start, start.Add(time.Duration(minutes)*time.Minute))
		for _, c := range checks {
			at := start.Add(time.Duration(c.minute) * time.Minute)
			got, err := vmQuery(addr, c.query, at)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("minute %d: %s: %v, want %v", c.minute, c.query, got, c.want)
			}
		}
		t.Logf("on VictoriaMetrics, firing at minutes: %s", firingMinutes(t, addr, start))
	})
}

// ruleGroupOrder is the groups of both files, the shard layer first.
func ruleGroupOrder(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, f := range []string{shardRulesFile, rulesFile} {
		var rf ruleFile
		readYAML(t, f, &rf)
		for _, g := range rf.Groups {
			names = append(names, g.Name)
		}
	}
	return names
}

// evalOnPromtool writes the scenario as a promtool unit test (the checks
// as promql_expr_test on ALERTS) and runs it.
func evalOnPromtool(t *testing.T, promtool string, series []evalSeries, checks []evalCheck) {
	var b strings.Builder
	b.WriteString("rule_files:\n")
	for _, f := range []string{shardRulesFile, rulesFile} {
		abs, err := filepath.Abs(f)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "- %q\n", abs)
	}
	b.WriteString("group_eval_order:\n")
	for _, g := range ruleGroupOrder(t) {
		fmt.Fprintf(&b, "- %s\n", g)
	}
	b.WriteString("evaluation_interval: 1m\ntests:\n- interval: 1m\n  input_series:\n")
	for _, s := range series {
		fmt.Fprintf(&b, "  - series: '%s'\n    values: '%s'\n", s.name, promtoolValues(s))
	}
	b.WriteString("  promql_expr_test:\n")
	for _, c := range checks {
		fmt.Fprintf(&b, "  - expr: '%s'\n    eval_time: %dm\n    exp_samples:", c.query, c.minute)
		if len(c.want) == 0 {
			b.WriteString(" []")
		}
		b.WriteString("\n")
		for _, w := range c.want {
			name, dest, _ := strings.Cut(w, "/")
			labels := fmt.Sprintf("alertname=%q", name)
			if dest != "" {
				labels += fmt.Sprintf(",dest=%q", dest)
			}
			fmt.Fprintf(&b, "    - labels: '{%s}'\n      value: 1\n", labels)
		}
	}
	file := filepath.Join(t.TempDir(), "scenario.test.yml")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(promtool, "test", "rules", file).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "SUCCESS") {
		t.Errorf("promtool test rules (the scenario on Prometheus's engine): %v\n%s", err, out)
	}
}

// promtoolValues writes a series' values as promtool's input: "_" for
// no sample, "stale" where a series stops (as a scrape marks it).
func promtoolValues(s evalSeries) string {
	vals := make([]string, len(s.values))
	for m, v := range s.values {
		switch {
		case math.IsNaN(v) && m > 0 && !math.IsNaN(s.values[m-1]):
			vals[m] = "stale"
		case math.IsNaN(v):
			vals[m] = "_"
		default:
			vals[m] = fmt.Sprint(v)
		}
	}
	return strings.Join(vals, " ")
}
