package collector

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/collector/pages"
)

// /traces answers 400, naming the fault, to a query it cannot parse or a
// parameter it does not know, instead of ignoring the filter and sending
// every destination; a repeated destination key is the union of the names.
func TestTracesRejectsBadQuery(t *testing.T) {
	e := pagesExporter(t)
	h := e.TracesHandler()
	many := strings.Repeat("destination=db01&", 50000) + "destination=db01"
	for _, c := range []struct{ query, want string }{
		{"destination=%zz", `invalid URL escape "%zz"`},
		{"destination=db01;x=1", "semicolon"},
		{many, "number of URL query parameters exceeded limit"},
		{"dest=db01", `unknown parameter "dest"`},
		{"destination=db01&limit=1", `unknown parameter "limit"`},
		{"format=xml", `format "xml": want html or json`},
		{"format=html&format=json", "format: given twice"},
	} {
		w := get(t, h, "/traces?"+c.query, "")
		name := c.query
		if len(name) > 40 {
			name = name[:40] + "..."
		}
		if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), c.want) ||
			!strings.HasPrefix(w.Body.String(), "/traces: ") {
			t.Errorf("?%s: %d %q, want 400 %q", name, w.Code, trim(w.Body.String()), c.want)
		}
	}
	w := get(t, h, "/traces?destination=idle&destination=db01&destination=idle", "")
	var got []pages.TraceView
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != 200 {
		t.Fatalf("repeated key: %d %v", w.Code, err)
	}
	if len(got) != 2 || got[0].Name != "db01" || got[1].Name != "idle" {
		t.Errorf("repeated key: got %d destinations, want db01 and idle once each", len(got))
	}
}

func trim(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// What an error echoes of the request is bounded: a 900 kB ?link= was
// echoed twice in a 1.8 MB answer, and a 900 kB name or parameter came
// back whole.
func TestTracesErrorsEchoLittle(t *testing.T) {
	e := pagesExporter(t)
	h := e.TracesHandler()
	big := strings.Repeat("x", 900<<10)
	for _, q := range []string{"link=" + big, "link=0x" + big + ":1", "link=" + big + ":1", "destination=" + big, big + "=1", "format=" + big} {
		w := get(t, h, "/traces?"+q, "")
		if w.Code/100 != 4 || w.Body.Len() > 512 {
			t.Errorf("?%.20s…: %d with %d bytes %q, want a 4xx with at most 512", q, w.Code, w.Body.Len(), trim(w.Body.String()))
		}
	}
}
