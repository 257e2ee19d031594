package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The label names the shipped dashboard and rules use must be label names
// the exporter exports. A query with a label that no series has is not an
// error to Prometheus: `x=~".*"` matches series without it, `on(x)` joins
// series that both lack it. So a renamed label (destination became dest
// for issue 12) would leave queries that run and return data but group
// or join wrongly; no other test sees that.
var (
	// {a="..", b=~".."}: the names of matchers, inside a selector.
	matcherRe = regexp.MustCompile(`[{,]\s*([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)\s*"`)
	// by (a, b), on(a), group_left(a), ...
	groupingRe = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^()]*)\)`)
	// label_replace(v, "dst", "repl", "src", "regex")
	replaceRe = regexp.MustCompile(`,\s*"(\w+)",\s*"[^"]*",\s*"(\w*)",\s*"[^"]*"\)`)
	// label_join(v, "dst", "sep", "src", ...): the destination.
	joinRe = regexp.MustCompile(`label_join\(.*,\s*"(\w+)",\s*"[^"]*"(?:,\s*"\w+")+\)`)
	// {{ $labels.x }} in annotations, {{x}} in legends ({{ end }} is not one).
	templateRe = regexp.MustCompile(`\$labels\.(\w+)|\{\{(\w+)\}\}`)
	// label_values(metric, x) in dashboard variables.
	labelValuesRe = regexp.MustCompile(`label_values\([^,]*,\s*(\w+)\)`)
)

// usedLabelNames returns the label names text (PromQL, templates) uses
// and the names its label_replace and label_join calls create.
func usedLabelNames(text string) (used, created []string) {
	for _, m := range replaceRe.FindAllStringSubmatch(text, -1) {
		created = append(created, m[1])
		if m[2] != "" {
			used = append(used, m[2])
		}
	}
	for _, m := range joinRe.FindAllStringSubmatch(text, -1) {
		created = append(created, m[1])
	}
	for _, m := range matcherRe.FindAllStringSubmatch(text, -1) {
		used = append(used, m[1])
	}
	for _, m := range groupingRe.FindAllStringSubmatch(text, -1) {
		for _, n := range strings.Split(m[1], ",") {
			if n = strings.TrimSpace(n); n != "" {
				used = append(used, n)
			}
		}
	}
	for _, m := range templateRe.FindAllStringSubmatch(text, -1) {
		used = append(used, m[1]+m[2])
	}
	for _, m := range labelValuesRe.FindAllStringSubmatch(text, -1) {
		used = append(used, m[1])
	}
	return used, created
}

// shippedQueries returns the text of every expression, legend, variable
// query and annotation of the shipped dashboard and rules, by where it is.
func shippedQueries(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
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
				} `json:"options"`
			} `json:"transformations"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name       string `json:"name"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			out["panel "+p.Title] += tg.Expr + "\n" + tg.Legend + "\n"
		}
	}
	for _, v := range dash.Templating.List {
		out["variable "+v.Name] = v.Definition
	}
	rules, err := os.ReadFile(filepath.Join(root, "dashboards/ibtracer.rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	out["ibtracer.rules.yml"] = string(rules)
	return out
}

// checkLabelNames checks the shipped queries against the label names of
// the Prometheus at addr, which has scraped the exporter.
func checkLabelNames(t *testing.T, addr string) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/api/v1/labels")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Data []string `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, n := range r.Data {
		have[n] = true
	}
	if !have["dest"] || !have["hop"] {
		t.Fatalf("Prometheus has label names %v: not the exporter's", r.Data)
	}
	var bad []string
	for where, text := range shippedQueries(t) {
		used, created := usedLabelNames(text)
		made := map[string]bool{}
		for _, n := range created {
			made[n] = true
		}
		for _, n := range used {
			if !have[n] && !made[n] {
				bad = append(bad, where+": "+n)
			}
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Errorf("label names no series has (exported: %v):\n%s", r.Data, strings.Join(bad, "\n"))
	}
}
