package pages

import (
	"bufio"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"

	"github.com/ibtracer/ibtracer_exporter/internal/webserve"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// TracesInFlight is how many /traces requests render at once; more get
// 503 at once. A request waiting on its client holds no slot
// (webserve.LimitInFlight).
const TracesInFlight = 2

// Traces serves /traces from a snapshot taken per request: the latest
// trace per destination (all, or those named by ?destination=NAME,
// repeatable: the union; of those,
// with ?link=GUID:PORT, the ones whose path crosses that link; 400 for a
// query that does not parse or an unknown parameter), with per-hop data,
// timestamps and the previous path, one destination at a time, so that a
// request holds one destination's view, not all of them. JSON (an array)
// by default; HTML, the path drawn hop by hop, for a client that prefers
// text/html (a browser) or asks ?format=html.
func Traces(snapshot func() Snapshot) http.Handler {
	return webserve.LimitInFlight(TracesInFlight, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		query, err := parseTracesQuery(r.URL.RawQuery)
		if err != nil {
			http.Error(w, "/traces: "+err.Error(), http.StatusBadRequest)
			return
		}
		snap := snapshot()
		dests := snap.Destinations
		all := len(dests)
		index := &nodeIndex{names: snap.NodeNames, dests: dests} // names.go
		var link *trace.LinkPort
		if query.link != nil {
			l, err := resolveLink(*query.link, index)
			if err != nil {
				http.Error(w, fmt.Sprintf("/traces: link %q: %v", short(query.link.String()), err), nameStatus(err))
				return
			}
			link = &l
		}
		if len(query.names) > 0 {
			var code int
			if dests, code, err = pick(dests, query.names, index); err != nil {
				http.Error(w, "/traces: "+err.Error(), code)
				return
			}
		}
		views := func(f func(TraceView)) {
			for i := range dests {
				if link == nil || dests[i].crosses(*link) {
					f(dests[i].view())
				}
			}
		}
		w.Header().Set("Vary", "Accept")
		bw := bufio.NewWriterSize(w, 32<<10)
		defer func() { _ = bw.Flush() }()
		if wantsHTML(r.Header.Get("Accept"), query.format) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			q := "" // the JSON link keeps the filter
			head := tracesHeadData{}
			for _, s := range dests {
				if len(dests) < all {
					q += "&destination=" + url.QueryEscape(s.Name)
					head.Destinations = append(head.Destinations, s.Name)
				}
			}
			if query.link != nil {
				q += "&link=" + url.QueryEscape(query.link.String())
				head.Link = "{" + link.NodeGUID.String() + "}"
				if n, ok := index.get().Node(link.NodeGUID); ok {
					head.Link = n.Label()
				}
				head.Link += ":" + strconv.Itoa(int(link.Port))
			}
			head.JSON = template.URL("?format=json" + q) // every value in q is url.QueryEscape'd
			writeTracesHTML(bw, head, link, views)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = bw.WriteString("[")
		i := 0
		views(func(v TraceView) {
			b, err := json.MarshalIndent(v, "  ", "  ")
			if err != nil {
				return
			}
			if i > 0 {
				_, _ = bw.WriteString(",")
			}
			i++
			_, _ = bw.WriteString("\n  ")
			_, _ = bw.Write(b)
		})
		_, _ = bw.WriteString("\n]\n")
	}))
}
