package dashboards

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/heatmap"
	"github.com/grafana/grafana-foundation-sdk/go/nodegraph"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"

	"github.com/ibtracer/ibtracer_exporter/internal/promtest"
)

const dashboardFile = "ibtracer.json"

// The panel types the dashboard may use: their options and field configs
// are decoded strictly against Grafana's schema. A panel of another type
// is an error (its options could not be checked).
var panelTypes = map[string]bool{"row": true}

func init() {
	rt := cog.NewRuntime()
	for _, v := range []struct {
		id  string
		reg func()
	}{
		{"stat", func() { rt.RegisterPanelcfgVariant(stat.VariantConfig()) }},
		{"timeseries", func() { rt.RegisterPanelcfgVariant(timeseries.VariantConfig()) }},
		{"table", func() { rt.RegisterPanelcfgVariant(table.VariantConfig()) }},
		{"heatmap", func() { rt.RegisterPanelcfgVariant(heatmap.VariantConfig()) }},
		{"nodeGraph", func() { rt.RegisterPanelcfgVariant(nodegraph.VariantConfig()) }},
	} {
		v.reg()
		panelTypes[v.id] = true
	}
	rt.RegisterDataqueryVariant(prometheus.VariantConfig())
}

// decodeDashboard decodes raw strictly: an unknown field anywhere in the
// dashboard, its panels, their options, field configs and Prometheus
// queries, or a value of the wrong type, is an error.
func decodeDashboard(raw []byte) (*dashboard.Dashboard, error) {
	var d dashboard.Dashboard
	if err := d.UnmarshalJSONStrict(raw); err != nil {
		return nil, err
	}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	// The SDK decodes a panel's fieldConfig loosely (only its "custom"
	// part strictly): decode each one again, strictly.
	var rawDash struct {
		Panels []struct {
			Title       string          `json:"title"`
			FieldConfig json.RawMessage `json:"fieldConfig"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &rawDash); err != nil {
		return nil, err
	}
	for _, p := range rawDash.Panels {
		if p.FieldConfig == nil {
			continue
		}
		var fc dashboard.FieldConfigSource
		if err := fc.UnmarshalJSONStrict(p.FieldConfig); err != nil {
			return nil, fmt.Errorf("panel %q: fieldConfig: %w", p.Title, err)
		}
	}
	for _, p := range allPanels(&d) {
		if !panelTypes[p.Type] {
			return nil, fmt.Errorf("panel %q: type %q is not one whose schema the test checks", title(p), p.Type)
		}
		for i, q := range p.Targets {
			if _, ok := q.(*prometheus.Dataquery); !ok {
				return nil, fmt.Errorf("panel %q: target %d is not a Prometheus query (%T)", title(p), i, q)
			}
		}
	}
	return &d, nil
}

// allPanels lists the panels, those inside rows included (rows excluded).
func allPanels(d *dashboard.Dashboard) []*dashboard.Panel {
	var out []*dashboard.Panel
	for _, pr := range d.Panels {
		if pr.Panel != nil {
			out = append(out, pr.Panel)
		}
		if pr.RowPanel != nil {
			for i := range pr.RowPanel.Panels {
				out = append(out, &pr.RowPanel.Panels[i])
			}
		}
	}
	return out
}

func title(p *dashboard.Panel) string {
	if p.Title == nil {
		return fmt.Sprintf("#%v", p.Id)
	}
	return *p.Title
}

func readDashboard(t *testing.T) []byte {
	t.Helper()
	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// shippedDashboard is the shipped dashboard, decoded strictly
// (decodeDashboard); not decoding fails the test.
func shippedDashboard(t *testing.T) *dashboard.Dashboard {
	t.Helper()
	d, err := decodeDashboard(readDashboard(t))
	if err != nil {
		t.Fatalf("%s does not match Grafana's dashboard schema: %v", dashboardFile, err)
	}
	return d
}

// TestDashboardSchema: the dashboard decodes strictly against Grafana's
// dashboard schema (github.com/grafana/grafana-foundation-sdk/go, generated
// from Grafana's own schemas) and follows the house rules.
func TestDashboardSchema(t *testing.T) {
	d := shippedDashboard(t)
	for _, p := range houseRules(d) {
		t.Error(p)
	}
}

// houseRules: every panel has a description and a datasource and unique
// id, every query an expression, every stat panel thresholds of its own
// (not Grafana's default: green, red from 80).
func houseRules(d *dashboard.Dashboard) []string {
	var problems []string
	bad := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	panels := allPanels(d)
	if len(panels) == 0 {
		bad("no panels")
	}
	ids := map[uint32]string{}
	for _, p := range panels {
		name := title(p)
		if p.Id != nil {
			if other, dup := ids[*p.Id]; dup {
				bad("panels %q and %q share id %d", other, name, *p.Id)
			}
			ids[*p.Id] = name
		}
		if p.Description == nil || strings.TrimSpace(*p.Description) == "" {
			bad("panel %q has no description", name)
		}
		if p.Datasource == nil || p.Datasource.Uid == nil || *p.Datasource.Uid == "" {
			bad("panel %q has no datasource", name)
		}
		if len(p.Targets) == 0 {
			bad("panel %q has no query", name)
		}
		for i, q := range p.Targets {
			if pq, ok := q.(*prometheus.Dataquery); !ok || strings.TrimSpace(pq.Expr) == "" {
				bad("panel %q: target %d has no expr", name, i)
			}
		}
		if p.Type != "stat" {
			continue
		}
		if p.FieldConfig == nil || p.FieldConfig.Defaults.Thresholds == nil || len(p.FieldConfig.Defaults.Thresholds.Steps) == 0 {
			bad("stat panel %q has no thresholds (Grafana would show its default: red from 80)", name)
			continue
		}
		steps := p.FieldConfig.Defaults.Thresholds.Steps
		if len(steps) == 2 && steps[0].Color == "green" && steps[0].Value == nil &&
			steps[1].Color == "red" && steps[1].Value != nil && *steps[1].Value == 80 {
			bad("stat panel %q keeps Grafana's default thresholds (green, red from 80)", name)
		}
	}
	return problems
}

// TestHouseRulesCatchMistakes: each house rule fails on a dashboard that
// breaks it.
func TestHouseRulesCatchMistakes(t *testing.T) {
	raw := readDashboard(t)
	cases := []struct {
		name, want string
		edit       func(stat, ts map[string]any)
	}{
		{"no description", "has no description", func(_, ts map[string]any) { delete(ts, "description") }},
		{"no datasource", "has no datasource", func(_, ts map[string]any) { delete(ts, "datasource") }},
		{"empty expr", "has no expr", func(_, ts map[string]any) { ts["targets"].([]any)[0].(map[string]any)["expr"] = " " }},
		{"no query", "has no query", func(_, ts map[string]any) { delete(ts, "targets") }},
		{"stat without thresholds", "has no thresholds", func(st, _ map[string]any) {
			delete(st["fieldConfig"].(map[string]any)["defaults"].(map[string]any), "thresholds")
		}},
		{"stat with default thresholds", "default thresholds", func(st, _ map[string]any) {
			st["fieldConfig"].(map[string]any)["defaults"].(map[string]any)["thresholds"] = map[string]any{
				"mode": "absolute", "steps": []any{map[string]any{"color": "green", "value": nil}, map[string]any{"color": "red", "value": 80}}}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var d map[string]any
			if err := json.Unmarshal(raw, &d); err != nil {
				t.Fatal(err)
			}
			var st, ts map[string]any
			for _, p := range d["panels"].([]any) {
				pm := p.(map[string]any)
				if pm["type"] == "stat" && st == nil {
					st = pm
				}
				if pm["type"] == "timeseries" && ts == nil {
					ts = pm
				}
			}
			c.edit(st, ts)
			b, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			dash, err := decodeDashboard(b)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			problems := houseRules(dash)
			if !strings.Contains(strings.Join(problems, "\n"), c.want) {
				t.Fatalf("want a problem %q, got %q", c.want, problems)
			}
		})
	}
}

// TestSchemaCatchesMistakes: a misspelled field at any level of the
// dashboard, or a value of the wrong type, fails the strict decoding; the
// dashboard as shipped does not.
func TestSchemaCatchesMistakes(t *testing.T) {
	raw := readDashboard(t)
	if _, err := decodeDashboard(raw); err != nil {
		t.Fatalf("the shipped dashboard must decode: %v", err)
	}
	// Each mutation edits the decoded JSON; p(type, field) is the first
	// panel of that type that has the field.
	type panelOf func(typ, field string) map[string]any
	obj := func(v any) map[string]any { return v.(map[string]any) }
	mutations := []struct {
		name string
		edit func(d map[string]any, p panelOf)
	}{
		{"dashboard: refresh misspelled", func(d map[string]any, _ panelOf) { rename(d, "refresh", "refrsh") }},
		{"panel: description misspelled", func(_ map[string]any, p panelOf) { rename(p("stat", "description"), "description", "descripton") }},
		{"panel: gridPos misspelled", func(_ map[string]any, p panelOf) { rename(p("timeseries", "gridPos"), "gridPos", "gridpos") }},
		{"target: legendFormat misspelled", func(_ map[string]any, p panelOf) {
			rename(obj(p("timeseries", "targets")["targets"].([]any)[0]), "legendFormat", "legendformat")
		}},
		{"target: instant is no bool", func(_ map[string]any, p panelOf) {
			obj(p("table", "targets")["targets"].([]any)[0])["instant"] = "yes"
		}},
		{"fieldConfig.defaults: thresholds misspelled", func(_ map[string]any, p panelOf) {
			rename(obj(obj(p("stat", "fieldConfig")["fieldConfig"])["defaults"]), "thresholds", "treshold")
		}},
		{"fieldConfig.defaults: color misspelled", func(_ map[string]any, p panelOf) {
			rename(obj(obj(p("stat", "fieldConfig")["fieldConfig"])["defaults"]), "color", "colour")
		}},
		{"fieldConfig.overrides: matcher misspelled", func(_ map[string]any, p panelOf) {
			ov := obj(p("table", "fieldConfig")["fieldConfig"])["overrides"].([]any)
			for _, o := range ov {
				rename(obj(o), "matcher", "matchers")
				return
			}
			t.Fatal("no table panel with overrides")
		}},
		{"stat options: colorMode misspelled", func(_ map[string]any, p panelOf) {
			rename(obj(p("stat", "options")["options"]), "colorMode", "colourMode")
		}},
		{"nodeGraph options: unknown field", func(_ map[string]any, p panelOf) {
			obj(p("nodeGraph", "options")["options"])["node"] = map[string]any{}
		}},
		{"panel type misspelled", func(_ map[string]any, p panelOf) { p("nodeGraph", "type")["type"] = "nodegraph" }},
		{"templating variable: field misspelled", func(d map[string]any, _ panelOf) {
			rename(obj(obj(d["templating"])["list"].([]any)[1]), "includeAll", "includeall")
		}},
	}
	for _, m := range mutations {
		t.Run(m.name, func(t *testing.T) {
			var d map[string]any
			if err := json.Unmarshal(raw, &d); err != nil {
				t.Fatal(err)
			}
			panel := func(typ, field string) map[string]any {
				for _, p := range d["panels"].([]any) {
					pm := obj(p)
					if _, ok := pm[field]; ok && pm["type"] == typ {
						if field != "fieldConfig" || typ != "table" || len(obj(pm["fieldConfig"])["overrides"].([]any)) > 0 {
							return pm
						}
					}
				}
				t.Fatalf("no %s panel with %s", typ, field)
				return nil
			}
			m.edit(d, panel)
			var buf bytes.Buffer
			if err := json.NewEncoder(&buf).Encode(d); err != nil {
				t.Fatal(err)
			}
			if _, err := decodeDashboard(buf.Bytes()); err == nil {
				t.Fatal("the strict decoding accepted it")
			} else {
				t.Logf("rejected: %.200s", err)
			}
		})
	}
}

// rename moves m[from] to m[to]; from must exist.
func rename(m map[string]any, from, to string) {
	v, ok := m[from]
	if !ok {
		panic(fmt.Sprintf("no field %q to rename", from))
	}
	delete(m, from)
	m[to] = v
}

// TestDashboardQueriesParse: every query of the dashboard, with its
// variables replaced, is valid PromQL (promtool checks them as recording
// rules). The e2e test against a real Prometheus checks they return data.
func TestDashboardQueriesParse(t *testing.T) {
	promtool := promtest.RequireTool(t, "promtool", "prometheus")
	d := shippedDashboard(t)
	vars := strings.NewReplacer("$job", ".*", "$instance", ".*", "$destination", ".*", "$switch", ".*", "$guid", ".*", "$__rate_interval", "1m", "$__range", "1h")
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	n := 0
	for _, p := range allPanels(d) {
		for _, q := range p.Targets {
			expr, _ := json.Marshal(vars.Replace(q.(*prometheus.Dataquery).Expr))
			fmt.Fprintf(&rules, "      - record: dashboard_query_%d\n        expr: %s\n", n, expr)
			n++
		}
	}
	file := filepath.Join(t.TempDir(), "queries.yml")
	if err := os.WriteFile(file, []byte(rules.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(promtool, "check", "rules", file).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules (the dashboard's %d queries): %v\n%s", n, err, out)
	}
	t.Logf("%d queries parse", n)
}
