package collector

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibtracer/ibtracer_exporter/internal/syncbuf"
)

// badLabels is a collector whose series the client library refuses: a
// label value that is not valid UTF-8.
type badLabels struct{ d *prometheus.Desc }

func (b badLabels) Describe(ch chan<- *prometheus.Desc) { ch <- b.d }
func (b badLabels) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(b.d, prometheus.GaugeValue, 1, "good")
	ch <- prometheus.MustNewConstMetric(b.d, prometheus.GaugeValue, 1, strings.Repeat("\xff", 64))
	ch <- prometheus.MustNewConstMetric(b.d, prometheus.GaugeValue, 1, "cut \xc3")
}

// A series the scrape has to leave out is never dropped silently: the
// same scrape counts it in ibtracer_scrape_errors_total, and one short
// log line says so while the count stays the same.
func TestScrapeCountsLeftOutSeries(t *testing.T) {
	d := prometheus.NewDesc("test_bad_labels", "A collector with a bad label value.", []string{"dest"}, nil)
	reg := NewRegistry(badLabels{d})
	var logs syncbuf.Buffer
	h := MetricsHandler(reg, 1, log.NewLogfmtLogger(&logs))
	scrape := func() string {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		if w.Code != http.StatusOK {
			t.Fatalf("status %d", w.Code)
		}
		return w.Body.String()
	}
	for i, want := range []string{"ibtracer_scrape_errors_total 2\n", "ibtracer_scrape_errors_total 4\n"} {
		body := scrape()
		if !strings.Contains(body, `test_bad_labels{dest="good"} 1`) {
			t.Fatalf("scrape %d lost the good series:\n%s", i, body)
		}
		if !strings.Contains(body, want) {
			t.Fatalf("scrape %d: want %q in:\n%s", i, want, grep(body, "scrape_errors"))
		}
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "series left out of /metrics") || !strings.Contains(lines[0], "errors=2") {
		t.Fatalf("want one log line for two scrapes with the same 2 errors, got %d:\n%s", len(lines), logs.String())
	}
	if n := len(lines[0]); n > 1024 {
		t.Fatalf("a %d-byte log line", n)
	}
	if bytes.Contains([]byte(lines[0]), []byte("\xff")) {
		t.Fatalf("the log line carries the raw bytes: %q", lines[0])
	}
}

// TestScrapeErrorLogCutsWholeCharacters: the first error's text is cut to
// 300 bytes in the log line, never inside a character, so the line stays
// valid UTF-8 whatever the error says.
func TestScrapeErrorLogCutsWholeCharacters(t *testing.T) {
	var logs syncbuf.Buffer
	c := newCheckedGatherer(prometheus.NewRegistry(), log.NewLogfmtLogger(&logs))
	c.log(1, errors.New("a"+strings.Repeat("é", 200))) // byte 300 is inside an é
	if line := logs.String(); !utf8.ValidString(line) || !strings.Contains(line, "é…") {
		t.Fatalf("log line not cut at a character: %q", line)
	}
}
