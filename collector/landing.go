package collector

import (
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/ibtracer/ibtracer_exporter/trace"
)

// Landing describes the exporter on its landing page.
type Landing struct {
	Name, Description, Version string
	// Links are the pages the exporter serves, in order (only those: a
	// link the mux does not serve is a broken link).
	Links []Link
}

// Link is one page on the landing page.
type Link struct{ Address, Text, Description string }

// landingRow is one destination in the landing page's status table.
type landingRow struct {
	Name, Address, Query string
	Last                 *trace.JSONResult
	LastChange           *time.Time
	PathChanges          uint64
}

type landingData struct {
	Landing
	Device string
	Rows   []landingRow
	OK     int
}

var landingTmpl = template.Must(template.New("landing").Funcs(pageFuncs).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Name}}</title>
<style>{{css}}</style></head><body>
<h1>{{.Name}}</h1>
<p>{{.Description}}</p>
<p class="muted">Version: {{.Version}} · Device: {{.Device}}</p>
<ul class="links">{{range .Links}}<li><a href="{{.Address}}">{{.Text}}</a>{{with .Description}}: {{.}}{{end}}</li>{{end}}</ul>
<h2>Destinations <span class="muted">({{.OK}} of {{len .Rows}} ok)</span></h2>
<table class="status"><thead><tr><th>Destination</th><th>Address</th><th>Status</th><th>Hops</th><th>Last trace</th><th>Last path change</th><th>Verdicts</th><th>Coverage</th></tr></thead>
<tbody>
{{- range .Rows}}
<tr><td><a href="traces?destination={{.Query}}">{{.Name}}</a></td><td>{{.Address}}</td>
{{- with .Last}}
<td class="{{statusClass .}}">{{.Status}}{{if .Reason}} ({{.Reason}}){{end}}</td><td>{{.PathHops}}</td><td>{{at .Time}}</td>
{{- else}}
<td class="s-none">not traced yet</td><td></td><td></td>
{{- end}}
<td>{{when .LastChange}}{{if .PathChanges}} (changes: {{.PathChanges}}){{end}}</td>
<td>{{range verdicts .Last}}<span class="verdict v-{{.Verdict}}">{{.N}} {{.Verdict}}{{with .By}} ({{.}}){{end}}</span> {{end}}</td>
<td>{{with .Last}}{{if .PathHops}}{{coverage .}}{{end}}{{end}}</td></tr>
{{- end}}
</tbody></table>
</body></html>
`))

// LandingHandler serves the landing page at / (and 404 elsewhere): what
// the exporter is, links to its pages, and a status table with one row
// per destination (status, hops, last change, verdicts of the last trace).
func (e *Exporter) LandingHandler(l Landing) http.Handler { return e.pages().landing(l) }

func (p pages) landing(l Landing) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		d := landingData{Landing: l, Device: p.device()}
		for _, v := range p.views() {
			d.Rows = append(d.Rows, landingRow{Name: v.Name, Address: v.Address, Query: v.Name, Last: v.Last,
				LastChange: v.LastChange, PathChanges: v.PathChanges})
			if v.Last != nil && trace.Status(v.Last.Status).Succeeded() {
				d.OK++
			}
		}
		var b strings.Builder
		if err := landingTmpl.Execute(&b, d); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(b.String()))
	})
}

// DefaultLinks are the pages main serves besides the landing page.
var DefaultLinks = []Link{
	{Address: "metrics", Text: "Metrics"},
	{Address: "traces", Text: "Traces", Description: "the latest trace of every destination, drawn hop by hop (JSON for scripts)"},
	{Address: "-/healthy", Text: "Health"},
}
