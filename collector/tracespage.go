package collector

import (
	"html/template"
	"io"
)

// The HTML view of /traces: a header, then one section per destination
// (written one at a time, as the JSON is), then a footer.
var (
	tracesHead = template.Must(template.New("head").Funcs(pageFuncs).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>ibtracer_exporter: traces</title>
<style>{{css}}</style></head><body>
<h1>Traces</h1>
<p class="muted">The latest trace of each destination, drawn hop by hop from this node, each hop coloured by its verdict and marked with who gave it (its agent, or its SMA where no agent answers); the path before the last change below it. <a href="./">Status</a> · <a href="{{.}}">JSON</a></p>
`))
	tracesDest = template.Must(template.New("dest").Funcs(pageFuncs).Parse(`<section class="destination" id="d-{{.Name}}">
<h2>{{.Name}} <span class="muted">{{.Address}}</span></h2>
{{- with .Last}}
<p>Status <span class="{{statusClass .}}">{{.Status}}</span>{{if .Reason}} ({{.Reason}}){{end}}, {{.PathHops}} hops,{{if .PathHops}} {{coverage .}},{{end}} traced {{at .Time}}{{if .Error}}: {{.Error}}{{end}}</p>
{{template "path" .}}
{{- with .Beyond}}
<p>Leaves the subnet at router {{.RouterGUID}} port {{.RouterInPort}}{{if .RemoteSA}}; subnet {{.SubnetPrefix}}, from its SA through the router: router port {{.RemoteRouterPort}} (LID {{.RemoteRouterLID}}) … {{.NodeType}} {{.NodeDesc}} {{.NodeGUID}} (LID {{.RemoteDLID}}); its hops are not walked (SMPs do not cross a router){{end}}{{with .Note}}. {{.}}{{end}}</p>
{{- end}}
{{- else}}
<p class="s-none">Not traced yet.</p>
{{- end}}
<p class="muted">Path changes: {{.PathChanges}}, last {{when .LastChange}}.</p>
{{- with .PreviousPath}}
<h3>Previous path <span class="muted">(last seen {{when $.PreviousPathUntil}}, traced {{at .Time}})</span></h3>
{{template "path" .}}
{{- end}}
</section>
{{define "path"}}{{if .Hops}}<table class="path"><tr>
{{- range $i, $h := .Hops}}
<td class="hop v-{{$h.Verdict}}"><div class="n">hop {{$h.Hop}} · {{$h.NodeType}}</div>
<div class="desc">{{hopName $h}}</div>
<div class="guid">{{$h.NodeGUID}}</div>
<div class="ports">LID {{$h.LID}} · in {{$h.InPort}} · out {{$h.OutPort}}</div>
<div class="verdict">{{$h.Verdict}}{{with $h.ValidatedBy}} <span class="by">by {{.}}</span>{{end}}</div>
{{if and $h.ExpectedInPort $h.ActualInPort}}
<div class="ports">expected in {{port $h.ExpectedInPort}}, arrived in {{port $h.ActualInPort}}</div>{{end}}
{{- with $h.CheckedLink}}
<div class="ports">checked link: {{with .FromName}}{{.}}{{else}}{{.FromGUID}}{{end}} port {{.FromPort}} → in {{.InPort}}; the traced link was not checked</div>{{end}}</td>
{{- if not (last $i $.Hops)}}<td class="arrow">→</td>{{end}}
{{- end}}
</tr></table>{{else}}<p class="muted">No hops.</p>{{end}}{{end}}`))
	tracesFoot = `</body></html>
`
)

// writeTracesHTML writes the HTML view of views, one destination at a
// time; query is the filter of the page (each value query-escaped), which
// its JSON link keeps. The link is handed to the template whole, as a
// URL: a value in a URL's query part is escaped again by html/template,
// "&" and "=" included, which turned the filter into part of format's
// value.
func writeTracesHTML(w io.Writer, query string, views func(func(TraceView))) {
	_ = tracesHead.Execute(w, template.URL("?format=json"+query)) // every value in query is url.QueryEscape'd
	views(func(v TraceView) { _ = tracesDest.Execute(w, v) })
	_, _ = io.WriteString(w, tracesFoot)
}
