package collector

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"golang.org/x/net/html"

	"github.com/ibtracer/ibtracer_exporter/collector/pages"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// pagesExporter has three destinations: db01 traced twice on two paths
// (a path change), its second trace with a status-7 hop; gone failing;
// idle never traced.
func pagesExporter(t *testing.T) *Exporter {
	t.Helper()
	e := New(log.NewNopLogger(), "seed")
	t.Cleanup(e.Stop)
	e.Apply(mustConfig(t, `
interval: 1h
destinations:
  - {name: db01, lid: 9}
  - {name: gone, lid: 11}
  - {name: idle, lid: 10}
`))
	start := time.Unix(1800000000, 0)
	hop := func(i int, guid ibmad.GUID, typ ibmad.NodeType, desc string, lid uint16, in, out uint8, st trace.AgentStatus) trace.Hop {
		return trace.Hop{Hop: i, NodeGUID: guid, PortGUID: guid + 1, NodeType: typ, NodeDesc: desc, LID: lid, InPort: in,
			OutPort: out, Agent: st, RTT: 2 * time.Microsecond}
	}
	r1 := &trace.Result{Status: trace.StatusOK, Start: start, Duration: 3 * time.Millisecond, MADs: 12, DLID: 9,
		Hops: []trace.Hop{hop(0, 0x10, ibmad.NodeTypeCA, "me", 1, 0, 1, trace.AgentSource),
			hop(1, 0x20, ibmad.NodeTypeSwitch, "leaf-a", 2, 1, 4, trace.AgentUnsupported),
			hop(2, 0x30, ibmad.NodeTypeCA, "db01 HCA-1", 9, 1, 0, trace.AgentValidated)}}
	r1.Hops[1].ValidatedBy, r1.Hops[2].ValidatedBy = trace.ByAgent, trace.ByAgent
	r2 := *r1
	r2.Status, r2.Start = trace.StatusMismatch, start.Add(time.Minute)
	r2.Hops = append([]trace.Hop(nil), r1.Hops...)
	r2.Hops[1] = hop(1, 0x21, ibmad.NodeTypeSwitch, "leaf-b", 3, 1, 7, trace.AgentMismatch)
	r2.Hops[1].ExpectedInPort, r2.Hops[1].ActualInPort, r2.Hops[1].ValidatedBy = 1, 2, trace.BySMA // a switch: its SMA
	for _, r := range []*trace.Result{r1, &r2} {
		e.dests.get("db01").record(r)
		e.dests.get("db01").observe(r)
	}
	r3 := &trace.Result{Status: trace.StatusUnreachable, Reason: trace.ReasonTimeout, Start: start, Duration: time.Second,
		Err: fmt.Errorf("no answer from hop 1"), Hops: []trace.Hop{hop(0, 0x10, ibmad.NodeTypeCA, "me", 1, 0, 1, trace.AgentSource)}}
	e.dests.get("gone").record(r3)
	e.dests.get("gone").observe(r3)
	return e
}

func get(t *testing.T, h http.Handler, target, accept string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// parse parses an HTML page; a page that does not parse fails the test.
func parse(t *testing.T, body string) *html.Node {
	t.Helper()
	n, err := html.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// visit calls f on every element.
func visit(n *html.Node, f func(*html.Node)) {
	if n.Type == html.ElementNode {
		f(n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		visit(c, f)
	}
}

func attr(n *html.Node, k string) string {
	for _, a := range n.Attr {
		if a.Key == k {
			return a.Val
		}
	}
	return ""
}

func text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

// servedMux serves what main serves.
func servedMux(e *Exporter) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/metrics", MetricsHandler(NewRegistry(e), 4, log.NewNopLogger()))
	mux.Handle("/traces", e.TracesHandler())
	mux.HandleFunc("/-/healthy", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "Healthy") })
	mux.Handle("/", e.LandingHandler(pages.Landing{Name: "ibtracer_exporter", Version: "test", Links: pages.DefaultLinks}))
	return mux
}

// The landing page: a row per destination with its status, hops, last
// path change and verdicts; every link on it answers 200 on the mux main
// builds (no pprof link: pprof is not served).
func TestLandingPage(t *testing.T) {
	e := pagesExporter(t)
	mux := servedMux(e)
	w := get(t, mux, "/", "text/html")
	if w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("/: %d %s", w.Code, w.Header().Get("Content-Type"))
	}
	doc := parse(t, w.Body.String())
	rows := map[string]string{}
	var links []string
	visit(doc, func(n *html.Node) {
		switch n.Data {
		case "tr":
			var cells []string
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.ElementNode && c.Data == "td" {
					cells = append(cells, text(c))
				}
			}
			if len(cells) > 0 {
				rows[cells[0]] = strings.Join(cells, " | ")
			}
		case "a":
			links = append(links, attr(n, "href"))
		}
	})
	want := map[string]string{
		"db01": "db01 | lid 9 | mismatch | not checked | 2 | 2027-01-15T08:01:00Z | 2027-01-15T08:01:00Z (changes: 1) | 1 validated (1 by agent) 1 mismatch (1 by sma) | 1/2 links confirmed (50%)",
		"gone": "gone | lid 11 | unreachable (timeout) | not checked | 0 | 2027-01-15T08:00:00Z | never |  | ",
		"idle": "idle | lid 10 | not traced yet | not checked |  |  | never |  | ",
	}
	for k, v := range want {
		if rows[k] != v {
			t.Errorf("row %s:\n got %q\nwant %q", k, rows[k], v)
		}
	}
	if len(rows) != len(want) {
		t.Errorf("rows %v, want %d", rows, len(want))
	}
	if len(links) < 6 {
		t.Fatalf("links %v: want the pages and one per destination", links)
	}
	base, _ := url.Parse("http://127.0.0.1/")
	for _, l := range links {
		u, err := base.Parse(l)
		if err != nil {
			t.Errorf("link %q: %v", l, err)
			continue
		}
		if strings.Contains(u.Path, "pprof") {
			t.Errorf("link %q: pprof is not served", l)
		}
		if r := get(t, mux, u.RequestURI(), "text/html"); r.Code != 200 {
			t.Errorf("link %q (%s): %d", l, u.RequestURI(), r.Code)
		}
	}
	if r := get(t, mux, "/nope", ""); r.Code != 404 {
		t.Errorf("/nope: %d, want 404", r.Code)
	}
}

// /traces?destination=NAME returns only that destination (404 for one not
// configured), with the previous path beside the latest after a change.
func TestTracesFilterAndPreviousPath(t *testing.T) {
	e := pagesExporter(t)
	h := e.TracesHandler()
	w := get(t, h, "/traces?destination=db01", "*/*")
	if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("%d %s", w.Code, w.Header().Get("Content-Type"))
	}
	var got []pages.TraceView
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Name != "db01" {
		t.Fatalf("got %+v, want db01 only", got)
	}
	v := got[0]
	if v.Traces != 2 {
		t.Errorf("db01: %d traces, want 2", v.Traces)
	}
	if v.Last == nil || v.PreviousPath == nil || v.PreviousPathUntil == nil {
		t.Fatalf("db01: want last_trace, previous_path and previous_path_until: %s", w.Body.String())
	}
	if v.Last.Hops[1].NodeDesc != "leaf-b" || v.PreviousPath.Hops[1].NodeDesc != "leaf-a" ||
		!v.PreviousPathUntil.Equal(time.Unix(1800000060, 3000000)) || !v.PreviousPath.Time.Equal(time.Unix(1800000000, 0)) {
		t.Errorf("db01: latest through %s, previous through %s until %v traced %v", v.Last.Hops[1].NodeDesc,
			v.PreviousPath.Hops[1].NodeDesc, v.PreviousPathUntil, v.PreviousPath.Time)
	}
	w = get(t, h, "/traces?destination=gone&destination=idle", "")
	got = nil
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || len(got) != 2 || got[0].Name != "gone" || got[1].Name != "idle" {
		t.Fatalf("two names: %v %s", err, w.Body.String())
	}
	if got[0].PreviousPath != nil || strings.Contains(w.Body.String(), "previous_path") {
		t.Errorf("a destination whose path never changed has a previous path: %s", w.Body.String())
	}
	if w = get(t, h, "/traces?destination=nope", ""); w.Code != 404 || !strings.Contains(w.Body.String(), `"nope"`) {
		t.Errorf("unknown destination: %d %s", w.Code, w.Body.String())
	}
}

// A browser gets HTML, the path drawn hop by hop with each verdict's
// colour; curl and scripts keep JSON.
func TestTracesContentNegotiation(t *testing.T) {
	e := pagesExporter(t)
	h := e.TracesHandler()
	for _, c := range []struct {
		accept, query string
		html          bool
	}{
		{"", "", false},
		{"*/*", "", false}, // curl
		{"application/json", "", false},
		{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "", true}, // a browser
		{"application/json, text/html;q=0.5", "", false},
		{"text/html", "", true},
		{"text/html", "format=json", false},
		{"*/*", "format=html", true},
	} {
		w := get(t, h, "/traces?"+c.query, c.accept)
		isHTML := strings.HasPrefix(w.Header().Get("Content-Type"), "text/html")
		if w.Code != 200 || isHTML != c.html || w.Header().Get("Vary") != "Accept" {
			t.Errorf("Accept %q, %q: %d %s (Vary %q), want html %v", c.accept, c.query, w.Code,
				w.Header().Get("Content-Type"), w.Header().Get("Vary"), c.html)
		}
	}
	w := get(t, h, "/traces?destination=db01", "text/html")
	doc := parse(t, w.Body.String())
	// The paths of db01: the latest, then the previous one.
	var paths [][]string
	visit(doc, func(n *html.Node) {
		if n.Data != "table" || attr(n, "class") != "path" {
			return
		}
		var hops []string
		visit(n, func(td *html.Node) {
			if td.Data == "td" && strings.HasPrefix(attr(td, "class"), "hop ") {
				hops = append(hops, attr(td, "class")+": "+text(td))
			}
		})
		paths = append(paths, hops)
	})
	want := [][]string{{
		"hop v-source: hop 0 · ca me 0x0000000000000010 LID 1 · in 0 · out 1 source",
		"hop v-mismatch: hop 1 · switch leaf-b 0x0000000000000021 LID 3 · in 1 · out 7 mismatch by sma expected in 1, arrived in 2",
		"hop v-validated: hop 2 · ca db01 HCA-1 0x0000000000000030 LID 9 · in 1 · out 0 validated by agent expected in 0, arrived in 0",
	}, {
		"hop v-source: hop 0 · ca me 0x0000000000000010 LID 1 · in 0 · out 1 source",
		"hop v-unsupported: hop 1 · switch leaf-a 0x0000000000000020 LID 2 · in 1 · out 4 unsupported by agent",
		"hop v-validated: hop 2 · ca db01 HCA-1 0x0000000000000030 LID 9 · in 1 · out 0 validated by agent expected in 0, arrived in 0",
	}}
	if fmt.Sprint(paths) != fmt.Sprint(want) {
		t.Errorf("paths drawn:\n%q\nwant\n%q", paths, want)
	}
	// db01's previous path is its last good one: drawn once, beside.
	if !strings.Contains(text(doc), "Last good path (traced 2027-01-15T08:00:00Z; the path before the last change, last seen 2027-01-15T08:01:00Z)") ||
		strings.Contains(text(doc), "Previous path") || strings.Contains(w.Body.String(), `id="d-gone"`) {
		t.Errorf("the filtered HTML: want db01's previous path and no other destination:\n%s", w.Body.String())
	}
}
