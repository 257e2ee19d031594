package pages

import (
	"fmt"
	"html/template"
	"mime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ibtracer/ibtracer_exporter/trace"
)

// The HTML the landing page and /traces share: one stylesheet, a colour
// per verdict, whoever gave it, the agent or the SMA (docs/metrics.md
// lists the verdicts), and a colour per link health.
var pageCSS = `
body { font-family: sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; } h3 { font-size: 1em; margin: .6em 0 .3em; }
table { border-collapse: collapse; }
table.status td, table.status th { border: 1px solid #ccc; padding: .3em .6em; text-align: left; }
table.path { border-collapse: separate; border-spacing: 7px 4px; }
table.path td { vertical-align: middle; padding: .2em; }
td.hop { border: 2px solid #999; border-radius: 6px; padding: .4em .6em; font-size: .9em; min-width: 10em; }
td.arrow { font-size: 1.4em; color: #666; text-align: center; }
td.arrow .lv { display: block; font-size: .55em; font-weight: bold; }
td.arrow.l-bad { color: #c22; } td.arrow.l-congested { color: #d80; } td.arrow.l-unknown { color: #999; }
td.arrow.l-broken { color: #c22; }
td.hop.break { background: #fff; border: 3px dashed #c22 !important; color: #c22; font-weight: bold; }
td.hop.cross, td.arrow.cross { outline: 3px solid #a0f; outline-offset: 3px; }
td.arrow.cross { background: #f1dcff; }
.guid, .ports { font-family: monospace; font-size: .9em; }
.verdict { font-weight: bold; } .by { font-weight: normal; font-size: .85em; color: #555; }
.paths { display: flex; flex-wrap: wrap; gap: 2em; align-items: flex-start; }
.paths > div { border-left: 3px solid #ddd; padding-left: .8em; }
.filter { background: #f1dcff; border: 1px solid #a0f; padding: .4em .8em; display: inline-block; }
.s-ok { color: #282; font-weight: bold; } .s-failing { color: #c22; font-weight: bold; } .s-none { color: #888; }
.s-unhealthy { color: #d60; font-weight: bold; }
.muted { color: #777; font-size: .9em; }
` + verdictCSS

// verdictStyles are the colours of the hops' verdicts. A verdict not in
// the list is drawn as v-other until it is given its own line here.
var verdictStyles = []struct{ verdict, background, border, extra string }{
	{string(trace.AgentValidated), "#d8f5d0", "#3a3", ""},
	{string(trace.AgentValidatedOtherLink), "#eaf5e6", "#8b8", " border-style: dashed !important;"},
	{string(trace.AgentMismatch), "#fbd0d0", "#c22", ""},
	{string(trace.AgentMismatchOtherLink), "#fdeaea", "#c22", " border-style: dashed !important;"},
	{string(trace.AgentLost), "#fde3c0", "#d80", ""},
	{string(trace.AgentUnsupported), "#e8e8e8", "#888", ""},
	{string(trace.AgentIngressUnknown), "#fdf6c0", "#bb0", ""},
	{string(trace.AgentUnproven), "#fdf6c0", "#d80", " border-style: dotted !important;"},
	{string(trace.AgentNotAsked), "#f4f4f4", "#bbb", ""},
	{string(trace.AgentSource), "#d8e8fb", "#36c", ""},
	{"other", "#ffffff", "#666", ""},
}

var verdictCSS = func() string {
	var b strings.Builder
	for _, v := range verdictStyles {
		fmt.Fprintf(&b, ".v-%s { background: %s; border-color: %s !important;%s }\n", v.verdict, v.background, v.border, v.extra)
	}
	return b.String()
}()

// verdictClass is the CSS class of a hop's verdict: v-VERDICT, or
// v-other for one without a style.
func verdictClass(v string) string {
	for _, s := range verdictStyles {
		if s.verdict == v {
			return "v-" + v
		}
	}
	return "v-other"
}

// verdictOrder is the order verdicts are listed in.
var verdictOrder = []trace.AgentStatus{trace.AgentValidated, trace.AgentValidatedOtherLink, trace.AgentMismatch, trace.AgentMismatchOtherLink, trace.AgentIngressUnknown,
	trace.AgentUnproven, trace.AgentLost, trace.AgentUnsupported, trace.AgentNotAsked}

// validators are who may give a verdict, in the order they are listed.
var validators = []trace.Validator{trace.ByAgent, trace.BySMA}

// verdictCount is one verdict, how many hops of a trace have it, and who
// gave it ("1 by agent, 2 by sma"; empty when nobody was asked).
type verdictCount struct {
	Verdict string
	N       int
	By      string
}

// coverageText is a trace's coverage as the pages show it: "3/4 links
// confirmed (75%)" (trace.Coverage).
func coverageText(j *trace.JSONResult) string { return j.Coverage.String() }

// verdicts counts the verdicts of a trace's hops after the source, and
// each verdict's hops by who gave it.
func verdicts(j *trace.JSONResult) []verdictCount {
	if j == nil {
		return nil
	}
	n := map[string]int{}
	by := map[[2]string]int{}
	for _, h := range j.Hops {
		n[h.Verdict]++
		by[[2]string{h.Verdict, h.ValidatedBy}]++
	}
	var out []verdictCount
	order := append([]trace.AgentStatus(nil), verdictOrder...)
	var others []string // a verdict verdictOrder does not list yet, after those it does
	for v := range n {
		if v != "" && v != string(trace.AgentSource) && !slices.Contains(verdictOrder, trace.AgentStatus(v)) {
			others = append(others, v)
		}
	}
	slices.Sort(others)
	for _, v := range others {
		order = append(order, trace.AgentStatus(v))
	}
	for _, v := range order {
		if n[string(v)] == 0 {
			continue
		}
		var who []string
		for _, b := range validators {
			if k := by[[2]string{string(v), string(b)}]; k > 0 {
				who = append(who, fmt.Sprintf("%d by %s", k, b))
			}
		}
		out = append(out, verdictCount{string(v), n[string(v)], strings.Join(who, ", ")})
	}
	return out
}

// statusClass is the CSS class of a trace status.
func statusClass(j *trace.JSONResult) string {
	switch {
	case j == nil:
		return "s-none"
	case trace.Status(j.Status).Succeeded():
		return "s-ok"
	}
	return "s-failing"
}

var pageFuncs = template.FuncMap{
	"verdicts":     verdicts,
	"coverage":     coverageText,
	"statusClass":  statusClass,
	"verdictClass": verdictClass,
	"draw":         draw,      // traces_html.go
	"linkState":    linkState, // health.go
	"pct":          func(f float64) string { return fmt.Sprintf("%.2f", f) },
	"css":          func() template.CSS { return template.CSS(pageCSS) },
	"when": func(t *time.Time) string {
		if t == nil || t.IsZero() {
			return "never"
		}
		return t.UTC().Format(time.RFC3339)
	},
	"at":   func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"port": func(p *uint8) string { return strconv.Itoa(int(*p)) },
	"hopName": func(h trace.JSONHop) string {
		if h.NodeName != "" {
			return h.NodeName
		}
		return h.NodeDesc
	},
	"last": func(i int, hops []trace.JSONHop) bool { return i == len(hops)-1 },
}

// wantsHTML reports whether a request prefers HTML to JSON: ?format=html
// or json decides; otherwise the Accept header must rank text/html above
// application/json. A browser sends text/html first; curl sends */*,
// which ranks them equal, and gets JSON, the default.
func wantsHTML(accept, format string) bool {
	switch format {
	case "html":
		return true
	case "json":
		return false
	}
	return acceptQ(accept, "text", "html") > acceptQ(accept, "application", "json")
}

// acceptQ returns the quality an Accept header gives to type/sub: that of
// its most specific matching range (0 when none matches).
func acceptQ(accept, typ, sub string) float64 {
	best, bestSpec := 0.0, -1
	for _, r := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(r))
		if err != nil {
			continue
		}
		t, s, _ := strings.Cut(mt, "/")
		spec := -1
		switch {
		case t == typ && s == sub:
			spec = 2
		case t == typ && s == "*":
			spec = 1
		case t == "*" && s == "*":
			spec = 0
		}
		if spec < bestSpec || spec < 0 {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 && f <= 1 {
				q = f
			}
		}
		best, bestSpec = q, spec
	}
	return best
}
