package pages

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
	Health               *PathHealthView // nil: no path health
}

type landingData struct {
	Landing
	Device string
	Rows   []landingRow
	// NOK counts the destinations traced ok whose path is healthy (or
	// not checked); NUnhealthy those traced ok on an unhealthy path;
	// NFailing those whose trace failed; NUntraced the rest.
	NOK, NUnhealthy, NFailing, NUntraced int
	fabricHealth
}

var landingTmpl = template.Must(template.New("landing").Funcs(pageFuncs).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Name}}</title>
<style>{{css}}</style></head><body>
<h1>{{.Name}}</h1>
<p>{{.Description}}</p>
<p class="muted">Version: {{.Version}} · Device: {{.Device}}</p>
<ul class="links">{{range .Links}}<li><a href="{{.Address}}">{{.Text}}</a>{{with .Description}}: {{.}}{{end}}</li>{{end}}</ul>
<h2>Destinations <span class="muted">({{.NOK}} of {{len .Rows}} ok{{if .NUnhealthy}}, <span class="s-unhealthy">{{.NUnhealthy}} on an unhealthy path</span>{{end}}{{if .NFailing}}, <span class="s-failing">{{.NFailing}} failing</span>{{end}}{{if .NUntraced}}, {{.NUntraced}} not traced yet{{end}})</span></h2>
<table class="status"><thead><tr><th>Destination</th><th>Address</th><th>Status</th><th>Path health</th><th>Hops</th><th>Last trace</th><th>Last path change</th><th>Verdicts</th><th>Coverage</th></tr></thead>
<tbody>
{{- range .Rows}}
<tr><td><a href="traces?destination={{.Query}}">{{.Name}}</a></td><td>{{.Address}}</td>
{{- with .Last}}
<td class="{{statusClass .}}">{{.Status}}{{if .Reason}} ({{.Reason}}){{end}}</td>
{{- else}}
<td class="s-none">not traced yet</td>
{{- end}}
{{- with .Health}}<td class="{{if .Healthy}}s-ok{{else}}s-unhealthy{{end}}">{{.Summary}}</td>{{else}}<td class="s-none">{{if $.HealthOn}}none{{else}}not checked{{end}}</td>{{end}}
{{- with .Last}}<td>{{.PathHops}}</td><td>{{at .Time}}</td>{{else}}<td></td><td></td>{{end}}
<td>{{when .LastChange}}{{if .PathChanges}} (changes: {{.PathChanges}}){{end}}</td>
<td>{{range verdicts .Last}}<span class="verdict {{verdictClass .Verdict}}">{{.N}} {{.Verdict}}{{with .By}} ({{.}}){{end}}</span> {{end}}</td>
<td>{{with .Last}}{{if .PathHops}}{{coverage .}}{{end}}{{end}}</td></tr>
{{- end}}
</tbody></table>
<h2>Suspected links <span class="muted">(link evidence: the links the bad paths have in common, the most suspected first)</span></h2>
{{- if not .EvidenceOn}}
<p class="muted">Link evidence is off (evidence: enabled: true in the configuration).</p>
{{- else if not .Suspected}}
<p class="s-ok">None: no bad path.</p>
{{- else}}
<table class="status suspects"><thead><tr><th>Link</th><th>Bad paths</th><th>Paths</th><th>Suspicion</th><th>Link health</th><th>Destinations</th></tr></thead>
<tbody>
{{- range .Suspected}}
<tr><td>{{.A}} — {{.B}}</td><td>{{.BadPaths}}</td><td>{{.Paths}}</td><td>{{pct .Suspicion}}</td><td>{{if eq .Verdict "ok"}}<span class="s-ok">ok</span>{{else if .Verdict}}<span class="s-unhealthy">{{.Verdict}}</span>{{else}}<span class="s-none">not checked</span>{{end}}</td><td><a href="traces?link={{.Filter}}">crossing it</a></td></tr>
{{- end}}
</tbody></table>
{{- if .SuspectsCut}}<p class="muted">and {{.SuspectsCut}} less suspected links (ibtracer_link_suspicion lists them all).</p>{{end}}
{{- end}}
<h2>Link health <span class="muted">(the links of the traced paths that are not healthy or are congested)</span></h2>
{{- if not .HealthOn}}
<p class="muted">Path health is off, or no path was checked yet (health: enabled: true in the configuration).</p>
{{- else if not .Unhealthy}}
<p class="s-ok">Every link of the traced paths is healthy.</p>
{{- else}}
<table class="status unhealthy"><thead><tr><th>Link</th><th>Verdict</th><th>Problems</th><th>Paths</th><th>Destinations</th></tr></thead>
<tbody>
{{- range .Unhealthy}}
<tr><td>{{.A}} → {{.B}}</td><td class="s-unhealthy">{{.Verdict}}</td><td>{{.Problems}}</td><td>{{.Paths}}</td><td><a href="traces?link={{.Filter}}">crossing it</a></td></tr>
{{- end}}
</tbody></table>
{{- if .UnhealthyCut}}<p class="muted">and {{.UnhealthyCut}} more (ibtracer_link_healthy lists them all).</p>{{end}}
{{- end}}
</body></html>
`))

// LandingPage serves the landing page at / (and 404 elsewhere), from a
// snapshot taken per request: what the exporter is, links to its pages,
// a status table with one row per
// destination (status, path health, hops, last change, verdicts of the
// last trace), the suspected links and the unhealthy links, each with
// its end nodes by name and a link to the destinations crossing it.
// A destination is ok when its trace succeeded and its path is healthy.
func LandingPage(snapshot func() Snapshot, l Landing) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		snap := snapshot()
		d := landingData{Landing: l, Device: snap.Device, fabricHealth: newFabricHealth(&snap)}
		for i := range snap.Destinations {
			v := snap.Destinations[i].view()
			d.Rows = append(d.Rows, landingRow{Name: v.Name, Address: v.Address, Query: v.Name, Last: v.Last,
				LastChange: v.LastChange, PathChanges: v.PathChanges, Health: v.PathHealth})
			switch {
			case v.Last == nil:
				d.NUntraced++
			case !trace.Status(v.Last.Status).Succeeded():
				d.NFailing++
			case v.PathHealth != nil && !v.PathHealth.Healthy:
				d.NUnhealthy++
			default:
				d.NOK++
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
