package dashboards

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// shardRulesFile is the shard layer: the recording rules every
// Prometheus (or vmalert) that scrapes exporters evaluates; rulesFile is
// the global layer, which reads only what the shards record
// (docs/metrics.md, "Where the rules run").
const shardRulesFile = "ibtracer.shard.rules.yml"

// shardHelpers are the shard file's records that only the shard file
// reads (they need not reach the global layer).
var shardHelpers = map[string]bool{
	"ibtracer:destination_unreachable:by_exporter": true,
	"job:ibtracer_device_up:count":                 true,
}

type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Record      string            `yaml:"record"`
			Expr        string            `yaml:"expr"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

var (
	// annotationQuery finds the queries in an annotation's template:
	// the string printf formats or query runs.
	annotationQuery = regexp.MustCompile("(?:printf|query)\\s+(`[^`]*`|\"(?:[^\"\\\\]|\\\\.)*\")")
	quoted          = regexp.MustCompile(`"[^"]*"`)
	identifier      = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*`)
)

// seriesNames are the series names an expression reads that are
// exporter series (ibtracer_...), up, or recorded series (a colon in
// the name); label values and names of functions are not.
func seriesNames(expr string) []string {
	var names []string
	for _, id := range identifier.FindAllString(quoted.ReplaceAllString(expr, `""`), -1) {
		if id == "up" || strings.HasPrefix(id, "ibtracer_") || strings.Contains(id, ":") {
			names = append(names, id)
		}
	}
	return names
}

// fleetRow is the dashboard's row about the whole fleet: its panels read
// only what the global layer has, so that it works against it too.
const fleetRow = "What is broken now"

type panelQuery struct{ panel, expr string }

// fleetRowQueries are the queries of the panels of fleetRow (the panels
// after the row, up to the next row).
func fleetRowQueries(t *testing.T) []panelQuery {
	t.Helper()
	var d struct {
		Panels []struct {
			Type    string `json:"type"`
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(readDashboard(t), &d); err != nil {
		t.Fatal(err)
	}
	var out []panelQuery
	in := false
	for _, p := range d.Panels {
		if p.Type == "row" {
			in = p.Title == fleetRow
			continue
		}
		for _, q := range p.Targets {
			if in {
				out = append(out, panelQuery{p.Title, q.Expr})
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no queries in row %q", dashboardFile, fleetRow)
	}
	return out
}

// TestRulesLayers: the shard file records only (sums, counts and maxima
// by bounded labels, named shard:ibtracer_... unless only the shard file
// reads them), and the global file, in its expressions and in its
// annotations' queries alike, reads no exporter series and no up: only
// what the shard file records under shard:ibtracer_..., its own records,
// the site's overrides (...:override) and ALERTS; so do the dashboard's fleet row's queries. So the global
// file and the fleet row work on a layer that sees nothing but the
// shards' recorded series, and every shard series is read by one of
// them.
func TestRulesLayers(t *testing.T) {
	var shard, global ruleFile
	readYAML(t, shardRulesFile, &shard)
	readYAML(t, rulesFile, &global)
	shardRecords, globalRecords := map[string]bool{}, map[string]bool{"ALERTS": true}
	for _, g := range shard.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				t.Errorf("%s: alert %s: the shard layer records only", shardRulesFile, r.Alert)
			}
			if !strings.HasPrefix(r.Record, "shard:ibtracer_") && !shardHelpers[r.Record] {
				t.Errorf("%s: record %s: want shard:ibtracer_... (the global layer federates those)", shardRulesFile, r.Record)
			}
			shardRecords[r.Record] = true
		}
	}
	for _, g := range global.Groups {
		for _, r := range g.Rules {
			if r.Record != "" {
				globalRecords[r.Record] = true
			}
		}
	}
	used := map[string]bool{}
	for _, q := range fleetRowQueries(t) {
		for _, n := range seriesNames(q.expr) {
			switch {
			case strings.HasPrefix(n, "shard:") && shardRecords[n]:
				used[n] = true
			case globalRecords[n]:
			default:
				t.Errorf("%s: panel %q of row %q reads %s, which the global layer does not have", dashboardFile, q.panel, fleetRow, n)
			}
		}
	}
	for _, g := range global.Groups {
		for _, r := range g.Rules {
			name := r.Alert + r.Record
			exprs := []string{r.Expr}
			for _, a := range r.Annotations {
				for _, m := range annotationQuery.FindAllStringSubmatch(a, -1) {
					exprs = append(exprs, m[1][1:len(m[1])-1])
				}
			}
			for _, e := range exprs {
				for _, n := range seriesNames(e) {
					switch {
					case strings.HasPrefix(n, "shard:") && shardRecords[n]:
						used[n] = true
					case globalRecords[n]:
					case strings.HasSuffix(n, ":override"):
						// the site's setting, recorded by its own rule file
						// next to this one (docs/metrics.md, "Where the rules run")
					default:
						t.Errorf("%s: %s reads %s, which the global layer does not have", rulesFile, name, n)
					}
				}
			}
		}
	}
	var unused []string
	for n := range shardRecords {
		if !used[n] && !shardHelpers[n] {
			unused = append(unused, n)
		}
	}
	sort.Strings(unused)
	if len(unused) > 0 {
		t.Errorf("%s records series no global rule reads: %v", shardRulesFile, unused)
	}
}

// TestRulesTestGroupOrder: the unit tests evaluate every group of both
// files in a fixed order, the shard layer first: promtool orders the
// groups it is not told about at random, and an alert then fires a step
// early or late from run to run.
func TestRulesTestGroupOrder(t *testing.T) {
	var shard, global ruleFile
	readYAML(t, shardRulesFile, &shard)
	readYAML(t, rulesFile, &global)
	var want []string
	for _, f := range []ruleFile{shard, global} {
		for _, g := range f.Groups {
			want = append(want, g.Name)
		}
	}
	var tests struct {
		Order []string `yaml:"group_eval_order"`
	}
	readYAML(t, testFile, &tests)
	if strings.Join(tests.Order, " ") != strings.Join(want, " ") {
		t.Errorf("%s: group_eval_order %v, want %v", testFile, tests.Order, want)
	}
}
