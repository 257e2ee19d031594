package e2e

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The label names the shipped dashboard and rules use must be label names
// the exporter exports. A query with a label that no series has is not an
// error to Prometheus: `x=~".*"` matches series without it, `on(x)` joins
// series that both lack it. So a renamed label (destination became dest
// for issue 12) would leave queries that run and return data but group
// or join wrongly; no other test sees that.
var (
	// metric{a="..", b=~".."}: a selector with its metric name.
	selectorRe = regexp.MustCompile(`([a-zA-Z_:][\w:]*)?\{([^{}]*)\}`)
	// The names of a selector's matchers, whatever quotes the value has
	// (%q: a printf in an annotation).
	matcherRe = regexp.MustCompile("(?:^|,)\\s*([a-zA-Z_]\\w*)\\s*(?:=~|!~|!=|=)\\s*(?:\"|'|`|%q)")
	// by (a, b), on(a), group_left(a), ...
	groupingRe = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^()]*)\)`)
	// label_replace(v, "dst", "repl", "src", "regex")
	replaceRe = regexp.MustCompile(`,\s*"(\w+)",\s*"[^"]*",\s*"(\w*)",\s*"[^"]*"\)`)
	// label_join(v, "dst", "sep", "src", ...)
	joinRe = regexp.MustCompile(`,\s*"(\w+)",\s*"[^"]*"((?:,\s*"\w+")+)\)`)
	// count_values("dst", v)
	countValuesRe = regexp.MustCompile(`count_values\(\s*"(\w+)"`)
	quotedRe      = regexp.MustCompile(`"(\w+)"`)
	// sort_by_label(v, "x", ...)
	sortByLabelRe = regexp.MustCompile(`sort_by_label(?:_desc)?\([^"]*((?:"\w+",?\s*)+)\)`)
	// $labels.x, .Labels.x, index $labels "x" in annotations.
	annotationRe = regexp.MustCompile(`(?:\$labels|\.Labels)\.(\w+)|index \$labels "(\w+)"`)
	// {{x}} and {{ x }} in a legend.
	legendRe = regexp.MustCompile(`\{\{\s*(\w+)\s*\}\}`)
	// label_values(metric{...}, x) in dashboard variables.
	labelValuesRe = regexp.MustCompile(`label_values\((?:[^(),{}]|\{[^}]*\})*,\s*(\w+)\s*\)`)
)

// labelUse is a label name a query uses, and the metric whose series must
// have it ("": any series).
type labelUse struct{ metric, name string }

// promqlLabels returns the label names the PromQL (or a template around
// it) in text uses, and the names its label_replace, label_join and
// count_values create.
func promqlLabels(text string) (used []labelUse, created []string) {
	for _, m := range replaceRe.FindAllStringSubmatch(text, -1) {
		created = append(created, m[1])
		if m[2] != "" {
			used = append(used, labelUse{"", m[2]})
		}
	}
	for _, m := range joinRe.FindAllStringSubmatch(text, -1) {
		created = append(created, m[1])
		for _, q := range quotedRe.FindAllStringSubmatch(m[2], -1) {
			used = append(used, labelUse{"", q[1]})
		}
	}
	for _, m := range countValuesRe.FindAllStringSubmatch(text, -1) {
		created = append(created, m[1])
	}
	for _, m := range sortByLabelRe.FindAllStringSubmatch(text, -1) {
		for _, q := range quotedRe.FindAllStringSubmatch(m[1], -1) {
			used = append(used, labelUse{"", q[1]})
		}
	}
	for _, sel := range selectorRe.FindAllStringSubmatch(text, -1) {
		for _, m := range matcherRe.FindAllStringSubmatch(sel[2], -1) {
			used = append(used, labelUse{sel[1], m[1]})
		}
	}
	for _, m := range groupingRe.FindAllStringSubmatch(text, -1) {
		for _, n := range strings.Split(m[1], ",") {
			if n = strings.TrimSpace(n); n != "" {
				used = append(used, labelUse{"", n})
			}
		}
	}
	for _, m := range labelValuesRe.FindAllStringSubmatch(text, -1) {
		used = append(used, labelUse{"", m[1]})
	}
	return used, created
}

// shippedUse is what one place of the dashboard or the rules uses.
type shippedUse struct {
	where   string
	used    []labelUse
	created []string
}

// shippedLabelUses returns the label names each panel, variable and rule
// of the shipped dashboard and rules uses.
func shippedLabelUses(t *testing.T) []shippedUse {
	t.Helper()
	var out []shippedUse
	b, err := os.ReadFile(filepath.Join(root, "dashboards/ibtracer.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr   string `json:"expr"`
				Legend string `json:"legendFormat"`
			} `json:"targets"`
			Transformations []struct {
				Options struct {
					IndexByName  map[string]int    `json:"indexByName"`
					RenameByName map[string]string `json:"renameByName"`
					Conversions  []struct {
						TargetField string `json:"targetField"`
					} `json:"conversions"`
				} `json:"options"`
			} `json:"transformations"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name       string          `json:"name"`
				Definition string          `json:"definition"`
				Query      json.RawMessage `json:"query"` // {"query": "..."} for a query variable
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	for _, p := range dash.Panels {
		u := shippedUse{where: "panel " + p.Title}
		for _, tg := range p.Targets {
			used, created := promqlLabels(tg.Expr)
			u.used, u.created = append(u.used, used...), append(u.created, created...)
			for _, m := range legendRe.FindAllStringSubmatch(tg.Legend, -1) {
				u.used = append(u.used, labelUse{"", m[1]})
			}
		}
		// A table's columns are the query's labels, then Time and Value
		// (Value #A, ... with several queries): the transformations name
		// them before (indexByName, renameByName keys) or after
		// (renameByName values) a rename.
		renamed := map[string]bool{}
		for _, tr := range p.Transformations {
			for _, v := range tr.Options.RenameByName {
				renamed[v] = true
			}
		}
		column := func(f string, afterRename bool) {
			if f != "Time" && f != "Value" && !strings.HasPrefix(f, "Value #") && !(afterRename && renamed[f]) {
				u.used = append(u.used, labelUse{"", f})
			}
		}
		for _, tr := range p.Transformations {
			for k := range tr.Options.IndexByName {
				column(k, false)
			}
			for k := range tr.Options.RenameByName {
				column(k, false)
			}
			for _, c := range tr.Options.Conversions {
				column(c.TargetField, true)
			}
		}
		out = append(out, u)
	}
	for _, v := range dash.Templating.List {
		var q struct {
			Query string `json:"query"`
		}
		_ = json.Unmarshal(v.Query, &q) // a datasource variable's query is a string
		used, created := promqlLabels(v.Definition + "\n" + q.Query)
		out = append(out, shippedUse{"variable " + v.Name, used, created})
	}
	type ruleFile struct {
		Groups []struct {
			Rules []struct {
				Alert, Record, Expr string
				Annotations         map[string]string
			}
		}
	}
	var rules ruleFile
	for _, f := range shippedRuleFiles {
		rb, err := os.ReadFile(filepath.Join(root, "dashboards", f))
		if err != nil {
			t.Fatal(err)
		}
		var file ruleFile
		if err := yaml.Unmarshal(rb, &file); err != nil {
			t.Fatal(err)
		}
		rules.Groups = append(rules.Groups, file.Groups...)
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			u := shippedUse{where: "rule " + r.Alert + r.Record}
			u.used, u.created = promqlLabels(r.Expr)
			for _, a := range r.Annotations {
				used, _ := promqlLabels(a) // printf'd queries
				u.used = append(u.used, used...)
				for _, m := range annotationRe.FindAllStringSubmatch(a, -1) {
					u.used = append(u.used, labelUse{"", m[1] + m[2]})
				}
			}
			out = append(out, u)
		}
	}
	return out
}

// promGet decodes the data of a Prometheus API answer.
func promGet(t *testing.T, addr, path string, q url.Values, data any) {
	t.Helper()
	resp, err := http.Get("http://" + addr + path + "?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := struct {
		Data any `json:"data"`
	}{data}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
}

// checkLabelNames checks the shipped queries against the series of the
// Prometheus at addr, which has scraped the exporter: a selector's label
// names against its metric's series (when Prometheus has that metric),
// every other use against all label names.
// onlyWhileMismatched are the labels of series that exist only under a
// fault the tests that call checkLabelNames do not produce:
// ibtracer_path_diverging_switch_info's, while a trace is a port mismatch
// (docs/metrics.md), and ibtracer_link_plan_status's, while a cable is not
// as the configured cabling plan says (TestPlanAlerts checks those on a
// real Prometheus).
var onlyWhileMismatched = map[string]bool{"switch_guid": true, "switch_name": true, "seen_at": true, "seen_at_hop": true,
	"status": true, "want": true, "remote_want": true}

func checkLabelNames(t *testing.T, addr string) {
	t.Helper()
	var names []string
	promGet(t, addr, "/api/v1/labels", nil, &names)
	have := map[string]bool{}
	for _, n := range names {
		have[n] = true
	}
	if !have["dest"] || !have["hop"] {
		t.Fatalf("Prometheus has label names %v: not the exporter's", names)
	}
	var series []map[string]string
	promGet(t, addr, "/api/v1/series", url.Values{"match[]": {`{__name__=~"ibtracer_.+"}`}}, &series)
	byMetric := map[string]map[string]bool{}
	for _, s := range series {
		m := byMetric[s["__name__"]]
		if m == nil {
			m = map[string]bool{}
			byMetric[s["__name__"]] = m
		}
		for k := range s {
			m[k] = true
		}
	}
	var bad []string
	for _, u := range shippedLabelUses(t) {
		made := map[string]bool{}
		for _, n := range u.created {
			made[n] = true
		}
		for _, l := range u.used {
			if made[l.name] {
				continue
			}
			if m, ok := byMetric[l.metric]; ok && !m[l.name] {
				bad = append(bad, u.where+": "+l.metric+" has no label "+l.name)
			} else if !ok && !have[l.name] && !onlyWhileMismatched[l.name] {
				bad = append(bad, u.where+": no series has label "+l.name)
			}
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Errorf("the dashboard and rules use label names the exporter does not export (it has %v):\n%s",
			names, strings.Join(bad, "\n"))
	}
}
