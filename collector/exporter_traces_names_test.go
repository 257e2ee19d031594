package collector

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/collector/pages"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// /traces?link= and ?destination= take a node by name as well as by GUID:
// its node-name-map name or its node description, as traced
// (pagesExporter: me 0x10, leaf-a 0x20, leaf-b 0x21, "db01 HCA-1" 0x30;
// the map names 0x21 spine-b). A name two nodes share is a 400 that lists
// both; a name no node has, a 404.
func TestTracesFiltersByName(t *testing.T) {
	e := pagesExporter(t)
	e.config().NodeNames = map[uint64]string{0x21: "spine-b"}
	// A second node described "me": the name is then ambiguous.
	twin := *e.dests.get("gone").last
	twin.Hops = append([]trace.Hop(nil), twin.Hops...)
	twin.Hops[0].NodeGUID = 0x11
	idle := e.dests.get("idle")
	h := e.TracesHandler()
	names := func(q string) ([]string, int, string) {
		w := get(t, h, "/traces?"+q, "")
		if w.Code != 200 {
			return nil, w.Code, w.Body.String()
		}
		var got []pages.TraceView
		if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
			t.Fatalf("?%s: %v", q, err)
		}
		var out []string
		for _, v := range got {
			out = append(out, v.Name)
		}
		return out, 200, ""
	}
	for _, c := range []struct{ query, want string }{
		{"link=leaf-a:4", "db01"},  // a description, on the previous path
		{"link=leaf-b:7", "db01"},  // the latest path
		{"link=spine-b:7", "db01"}, // the node-name-map's name of leaf-b
		{"link=me:1", "db01 gone"}, // the source
		{"link=" + url.QueryEscape("db01 HCA-1:1"), "db01"},
		{"link=leaf-a:5", ""},                                    // another port of the node
		{"destination=" + url.QueryEscape("db01 HCA-1"), "db01"}, // the destination's node, by description
		{"destination=0x30", "db01"},                             // by node GUID
		{"destination=0x31", "db01"},                             // by its port GUID
		{"destination=db01", "db01"},                             // by its configured name, as before
		{"destination=gone&link=me:1", "gone"},
	} {
		got, code, body := names(c.query)
		if code != 200 || strings.Join(got, " ") != c.want {
			t.Errorf("?%s: %d %v %q, want 200 %q", c.query, code, got, body, c.want)
		}
	}
	// A long name is echoed cut short.
	long := strings.Repeat("n", 20000)
	for _, q := range []string{"link=" + long + ":1", "destination=" + long} {
		if _, code, body := names(q); code != http.StatusNotFound || len(body) > 400 {
			t.Errorf("?%.20s...: %d, %d bytes of error", q, code, len(body))
		}
	}
	idle.record(&twin)
	idle.observe(&twin)
	for _, c := range []struct {
		query string
		code  int
		want  []string
	}{
		{"link=me:1", http.StatusBadRequest, []string{`the name "me" matches 2 nodes`, "{0x0000000000000010}", "{0x0000000000000011}"}},
		{"link=nope:1", http.StatusNotFound, []string{`no node is named "nope"`}},
		{"link=20:4", http.StatusNotFound, []string{`no node is named "20"`, "a node GUID is written with 0x"}},
		{"destination=me", http.StatusBadRequest, []string{`the name "me" matches 2 nodes`}},
		{"destination=leaf-a", http.StatusNotFound, []string{"no destination", "leaf-a {0x0000000000000020}"}},
		{"destination=nope", http.StatusNotFound, []string{`no destination "nope"`}},
	} {
		_, code, body := names(c.query)
		for _, w := range c.want {
			if code != c.code || !strings.Contains(body, w) {
				t.Errorf("?%s: %d %q, want %d and %q", c.query, code, body, c.code, w)
			}
		}
	}
}
