package pages

import (
	"html/template"
	"io"
	"strings"

	"github.com/ibtracer/ibtracer_exporter/linkhealth"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// The HTML view of /traces: a header (with the filter in use), then one
// section per destination (written one at a time, as the JSON is), then
// a footer. Each path is drawn hop by hop: a box per hop coloured by its
// verdict, an arrow per link coloured by the link's health, a dashed box
// where a failed trace broke, and, with ?link=, the link the filter
// names outlined (docs/metrics.md, "Pages").
var (
	tracesHead = template.Must(template.New("head").Funcs(pageFuncs).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>ibtracer_exporter: traces</title>
<style>{{css}}</style></head><body>
<h1>Traces</h1>
<p class="muted">The latest trace of each destination, drawn hop by hop from this node, each hop coloured by its verdict and marked with who gave it (its agent, or its SMA where no agent answers), each link by its health; where a trace broke, the last good path beside it; the path before the last change below it. <a href="./">Status</a> · <a href="{{.JSON}}">JSON</a></p>
{{- if or .Link .Destinations}}
<p class="filter">Filtered: {{with .Link}}destinations whose path crosses the link at <b>{{.}}</b> (either end; the crossing is outlined){{end}}{{if and .Link .Destinations}}, among {{end}}{{with .Destinations}}destinations {{range $i, $d := .}}{{if $i}}, {{end}}<b>{{$d}}</b>{{end}}{{end}} · <a href="?">show all</a></p>
{{- end}}
`))
	tracesDest = template.Must(template.New("dest").Funcs(pageFuncs).Parse(`<section class="destination" id="d-{{.Name}}">
<h2>{{.Name}} <span class="muted">{{.Address}}</span></h2>
{{- with .Last}}
<p>Status <span class="{{statusClass .}}">{{.Status}}</span>{{if .Reason}} ({{.Reason}}){{end}}, {{.PathHops}} hops,{{if .PathHops}} {{coverage .}},{{end}} traced {{at .Time}}{{if .Error}}: {{.Error}}{{end}}</p>
{{- end}}
{{- with .PathHealth}}
<p class="path-health">Path health: <span class="{{if .Healthy}}s-ok{{else}}s-unhealthy{{end}}">{{.Summary}}</span>{{range .Links}}{{if not .Healthy}}; link {{.Hop}} {{.From}} → {{.To}}: {{linkState .Verdict .Healthy}}{{range .Problems}}, {{.}}{{end}}{{end}}{{end}}</p>
{{- end}}
{{- with .Last}}
<div class="paths"><div class="latest"><h3>Latest trace</h3>
{{template "path" draw . $.PathHealth $.Filter}}
{{- with .Beyond}}
<p>Leaves the subnet at router {{.RouterGUID}} port {{.RouterInPort}}{{if .RemoteSA}}; subnet {{.SubnetPrefix}}, from its SA through the router: router port {{.RemoteRouterPort}} (LID {{.RemoteRouterLID}}) … {{.NodeType}} {{.NodeDesc}} {{.NodeGUID}} (LID {{.RemoteDLID}}); its hops are not walked (SMPs do not cross a router){{end}}{{with .Note}}. {{.}}{{end}}</p>
{{- end}}
</div>
{{- with $.LastGoodPath}}
<div class="last-good"><h3>Last good path <span class="muted">(traced {{at .Time}}{{if $.PreviousIsLastGood}}; the path before the last change, last seen {{when $.PreviousPathUntil}}{{end}})</span></h3>
{{template "path" draw . nil $.Filter}}
</div>
{{- end}}
</div>
{{- else}}
<p class="s-none">Not traced yet.</p>
{{- end}}
<p class="muted">Path changes: {{.PathChanges}}, last {{when .LastChange}}.</p>
{{- if not $.PreviousIsLastGood}}{{with .PreviousPath}}
<h3>Previous path <span class="muted">(last seen {{when $.PreviousPathUntil}}, traced {{at .Time}})</span></h3>
{{template "path" draw . nil $.Filter}}
{{- end}}{{end}}
</section>
{{define "path"}}{{if .Hops}}<table class="path"><tr>
{{- range $i, $h := .Hops}}
{{- if $i}}{{with index $.Links $i}}<td class="arrow {{.Class}}"{{with .Title}} title="{{.}}"{{end}}>→{{with .Text}} <span class="lv">{{.}}</span>{{end}}</td>{{end}}{{end}}
<td class="hop {{verdictClass $h.Verdict}}{{if index $.Cross $i}} cross{{end}}"><div class="n">hop {{$h.Hop}} · {{$h.NodeType}}</div>
<div class="desc">{{hopName $h}}</div>
<div class="guid">{{$h.NodeGUID}}</div>
<div class="ports">LID {{$h.LID}} · in {{$h.InPort}} · out {{$h.OutPort}}</div>
<div class="verdict">{{$h.Verdict}}{{with $h.ValidatedBy}} <span class="by">by {{.}}</span>{{end}}</div>
{{if and $h.ExpectedInPort $h.ActualInPort}}
<div class="ports">expected in {{port $h.ExpectedInPort}}, arrived in {{port $h.ActualInPort}}</div>{{end}}
{{- with $h.CheckedLink}}
<div class="ports">checked link: {{with .FromName}}{{.}}{{else}}{{.FromGUID}}{{end}} port {{.FromPort}} → in {{.InPort}}; the traced link was not checked</div>{{end}}</td>
{{- end}}
{{- with .Break}}
<td class="arrow l-broken{{if .Cross}} cross{{end}}">→ <span class="lv">✗</span></td>
<td class="hop break"><div class="n">broke here</div> <div>stopped after hop {{.Hop}}{{with .Port}}, leaving by port {{.}}{{end}}</div> <div class="ports">{{.Status}}{{with .Reason}} ({{.}}){{end}}</div></td>
{{- end}}
</tr></table>{{else}}<p class="muted">No hops{{with .Error}}: {{.}}{{end}}.</p>{{end}}{{end}}`))
	tracesFoot = `</body></html>
`
)

// tracesHeadData is the header of the HTML view: its JSON link (the
// filter kept) and the filter in use, for a person.
type tracesHeadData struct {
	JSON         template.URL
	Link         string   // the ?link= end, NAME {GUID}:PORT ("" for none)
	Destinations []string // ?destination= values (none: all)
}

// pathDrawing is one path as the template draws it: the hops, the link
// before each hop (Links[i] enters hop i; Links[0] is unused), which hops
// the filtered link touches, and where a failed trace broke.
type pathDrawing struct {
	Hops  []trace.JSONHop
	Error string
	Links []linkCell
	Cross []bool
	Break *breakCell
}

// linkCell is the arrow into a hop: its class (l-ok, l-bad,
// l-congested, l-unknown, l-none without health; cross when the filter
// names it), the verdict
// under a bad one, and the problems as its title.
type linkCell struct{ Class, Text, Title string }

// breakCell is where a trace that did not walk the whole path stopped:
// after hop Hop, leaving by Port (0: not known).
type breakCell struct {
	Hop            int
	Port           uint8
	Status, Reason string
	Cross          bool // the filtered link is the one it broke on
}

// draw lays out j for the template: link health from h when it is j's
// (the latest trace's; nil for older paths), the crossing of the
// filtered link l (nil: no filter).
func draw(j *trace.JSONResult, h *PathHealthView, l *trace.LinkPort) pathDrawing {
	d := pathDrawing{Hops: j.Hops, Error: j.Error, Links: linkCells(h, len(j.Hops)), Cross: make([]bool, len(j.Hops))}
	n := len(j.Hops)
	if n > 0 && !trace.Status(j.Status).Walked() {
		last := j.Hops[n-1]
		d.Break = &breakCell{Hop: last.Hop, Port: last.OutPort, Status: j.Status, Reason: j.Reason}
	}
	if l == nil {
		return d
	}
	g := l.NodeGUID.String()
	at := func(h trace.JSONHop, port uint8) bool { return h.NodeGUID == g && port == l.Port }
	for i := 1; i < n; i++ {
		if at(j.Hops[i-1], j.Hops[i-1].OutPort) || at(j.Hops[i], j.Hops[i].InPort) {
			d.Cross[i-1], d.Cross[i] = true, true
			d.Links[i].Class += " cross"
		}
	}
	if d.Break != nil && d.Break.Port != 0 && at(j.Hops[n-1], d.Break.Port) {
		d.Cross[n-1], d.Break.Cross = true, true
	}
	return d
}

// linkCells are the arrows into n hops, coloured by h's link verdicts
// (l-none for all without h).
func linkCells(h *PathHealthView, n int) []linkCell {
	cells := make([]linkCell, n)
	for i := range cells {
		cells[i].Class = "l-none" // no health read for this path
	}
	if h == nil {
		return cells
	}
	for _, lh := range h.Links {
		if lh.Hop <= 0 || lh.Hop >= n {
			continue
		}
		c := &cells[lh.Hop]
		switch {
		case lh.Verdict == linkhealth.LinkCongested:
			c.Class, c.Text = "l-congested", lh.Verdict
		case lh.Verdict == linkhealth.LinkUnknown:
			c.Class, c.Text = "l-unknown", "?"
		case !lh.Healthy:
			c.Class, c.Text = "l-bad", "✗ "+linkState(lh.Verdict, lh.Healthy)
		default:
			c.Class = "l-ok"
		}
		c.Title = lh.From + " → " + lh.To + ": " + lh.Verdict
		if len(lh.Problems) > 0 {
			c.Title += ": " + strings.Join(lh.Problems, "; ")
		}
	}
	return cells
}

// destPage is one destination as the HTML view draws it: its view and
// the filtered link (nil: none).
type destPage struct {
	TraceView
	Filter *trace.LinkPort
	// PreviousIsLastGood: the path before the last change is the last
	// good path, drawn once, beside the latest trace.
	PreviousIsLastGood bool
}

// writeTracesHTML writes the HTML view of views, one destination at a
// time; head is the header, its JSON link the filter of the page (each
// value query-escaped). The link is handed to the template whole, as a
// URL: a value in a URL's query part is escaped again by html/template,
// "&" and "=" included, which turned the filter into part of format's
// value.
func writeTracesHTML(w io.Writer, head tracesHeadData, link *trace.LinkPort, views func(func(TraceView))) {
	_ = tracesHead.Execute(w, head)
	views(func(v TraceView) {
		same := v.PreviousPath != nil && v.LastGoodPath != nil && v.PreviousPath.Time.Equal(v.LastGoodPath.Time)
		_ = tracesDest.Execute(w, destPage{TraceView: v, Filter: link, PreviousIsLastGood: same})
	})
	_, _ = io.WriteString(w, tracesFoot)
}
