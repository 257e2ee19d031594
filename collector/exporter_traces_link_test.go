package collector

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/collector/pages"
	"github.com/ibtracer/ibtracer_exporter/trace"
	"golang.org/x/net/html"
)

// /traces?link=GUID:PORT (or NAME:PORT, exporter_traces_names_test.go) keeps the destinations whose latest trace or
// previous path crosses that link, named by either end; with
// ?destination= it narrows those. pagesExporter: db01 went me:1 ->
// leaf-a (0x20) 1/4 -> db01 (0x30) 1, now goes through leaf-b (0x21) 1/7;
// gone stopped at me leaving by port 1; idle was never traced.
func TestTracesLinkFilter(t *testing.T) {
	e := pagesExporter(t)
	h := e.TracesHandler()
	for _, c := range []struct {
		query string
		want  string
	}{
		{"link=0x21:7", "db01"},                    // the latest path, near end
		{"link=0x30:1", "db01"},                    // far end
		{"link=0x21:1", "db01"},                    // leaf-b's ingress: the link from me
		{"link=0x20:4", "db01"},                    // only the previous path
		{"link=0x10:1", "db01 gone"},               // gone stopped leaving by it
		{"link=0x0000000000000010:1", "db01 gone"}, // the same GUID written in full
		{"link=0x20:5", ""},                        // another port of a node on the path
		{"link=0x99:1", ""},                        // no path's node
		{"link=0x10:1&destination=idle", ""},       // never traced
		{"link=0x10:1&destination=gone", "gone"},   // both filters
		{"destination=db01&link=0x21%3A7", "db01"}, // escaped
	} {
		w := get(t, h, "/traces?"+c.query, "")
		var got []pages.TraceView
		if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != 200 {
			t.Fatalf("?%s: %d %v %s", c.query, w.Code, err, w.Body.String())
		}
		var names []string
		for _, v := range got {
			names = append(names, v.Name)
		}
		if strings.Join(names, " ") != c.want {
			t.Errorf("?%s: %v, want %q", c.query, names, c.want)
		}
	}
	for _, c := range []struct{ query, want string }{
		{"link=0x20", "want NODE:PORT"},
		{"link=", "want NODE:PORT"},
		{"link=0x:4", "node GUID"},
		{"link=0x20:0", "port"},
		{"link=0x20:256", "port"},
		{"link=0x20:4&link=0x21:7", "link: given twice"},
	} {
		w := get(t, h, "/traces?"+c.query, "")
		if w.Code != http.StatusBadRequest || !strings.HasPrefix(w.Body.String(), "/traces: link") || !strings.Contains(w.Body.String(), c.want) {
			t.Errorf("?%s: %d %q, want 400 naming link and %q", c.query, w.Code, w.Body.String(), c.want)
		}
	}
	// The HTML page shows the same destinations.
	w := get(t, h, "/traces?link=0x20:4&format=html", "")
	body := w.Body.String()
	if w.Code != 200 || !strings.Contains(body, `id="d-db01"`) || strings.Contains(body, `id="d-gone"`) {
		t.Errorf("HTML: %d\n%s", w.Code, body[strings.Index(body, "<h1>"):])
	}
}

// followJSONLink finds the JSON link of a /traces HTML page and fetches
// it.
func followJSONLink(t *testing.T, h http.Handler, page string) (string, []pages.TraceView) {
	t.Helper()
	w := get(t, h, page, "text/html")
	href := ""
	visit(parse(t, w.Body.String()), func(n *html.Node) {
		if n.Data == "a" && text(n) == "JSON" {
			href = attr(n, "href")
		}
	})
	if w.Code != 200 || !strings.HasPrefix(href, "?") {
		t.Fatalf("%s: %d, JSON link %q", page, w.Code, href)
	}
	w = get(t, h, "/traces"+href, "")
	var got []pages.TraceView
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != 200 {
		t.Fatalf("%s: its JSON link %q answers %d %v %s", page, href, w.Code, err, w.Body.String())
	}
	return href, got
}

// The JSON link of a filtered HTML page keeps the filter and answers:
// what it lists is what the page shows.
func TestTracesHTMLJSONLinkKeepsFilter(t *testing.T) {
	e := pagesExporter(t)
	h := e.TracesHandler()
	for _, c := range []struct{ page, want string }{
		{"/traces", "db01 gone idle"},
		{"/traces?destination=db01", "db01"},
		{"/traces?destination=gone&destination=idle", "gone idle"},
		{"/traces?link=0x20:4", "db01"},
		{"/traces?link=0x10:1&destination=gone", "gone"},
	} {
		href, got := followJSONLink(t, h, c.page)
		var names []string
		for _, v := range got {
			names = append(names, v.Name)
		}
		if strings.Join(names, " ") != c.want {
			t.Errorf("%s: its JSON link %q lists %v, want %q", c.page, href, names, c.want)
		}
	}
}

// TestTracesLinkFilterFollowsTheEvidence: a destination whose first trace
// crossed leaf-a's port 4 and whose latest failed before leaf-a is named
// by the link evidence through that link (its last good path), so
// /traces?link= must list it too, though no path change was recorded.
func TestTracesLinkFilterFollowsTheEvidence(t *testing.T) {
	e := pagesExporter(t)
	db01 := e.dests.get("db01")
	good, _ := db01.previous() // me:1 -> leaf-a 1/4 -> db01
	failed := e.dests.get("gone").last
	idle := e.dests.get("idle")
	for _, r := range []*trace.Result{good, failed} {
		idle.record(r)
		idle.observe(r)
	}
	w := get(t, e.TracesHandler(), "/traces?link=0x20:4&destination=idle", "")
	var got []pages.TraceView
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != 200 || len(got) != 1 || got[0].Name != "idle" {
		t.Fatalf("?link=0x20:4&destination=idle: %d %v %s, want idle (its last good path crosses the link)", w.Code, err, w.Body.String())
	}
}
