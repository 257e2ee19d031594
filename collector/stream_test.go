package collector

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// streamState is an exporter with every kind of series: health with
// counters, link evidence, hop series, failed traces with their reasons, a
// dead link and label values to escape, beside the other collectors of
// the daemon (an RTT histogram, a reload gauge).
func streamState(t *testing.T) (*Registry, func()) {
	t.Helper()
	topo, _ := sim.FatTree2(2, 2, 3, 1)
	f, err := sim.New(topo, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	yml := "interval: 1h\nhealth: {enabled: true, counters: true}\n" + evidenceYAML + "destinations:\n"
	agentsBut(t, f, "H0-0")
	var dests []string
	for i, n := range f.Nodes() {
		if n.Name != "H0-0" && !n.IsSwitch() {
			lid, _ := f.LIDOf(n.Name, 0)
			yml += fmt.Sprintf("  - {name: %s, lid: %d, hops: %v, labels: {note: %q}}\n", n.Name, lid, i%2 == 0,
				"a \"quoted\" \\ value\nover two lines")
			dests = append(dests, n.Name)
		}
	}
	e := simExporterAt(t, f, "H0-0", yml)
	e.traceAll(t, dests)
	spine, port, _ := spineDown(t, e, f, dests)
	if err := f.SetLinkState(spine, port, false, false); err != nil {
		t.Fatal(err)
	}
	e.traceEach(dests)
	rtt, observe := NewMADRTT()
	observe(0, 3e3)
	reloadOK := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: namespace, Name: "config_last_reload_successful",
		Help: "1 if the last configuration reload succeeded."})
	return NewRegistry(e, rtt, reloadOK), func() {}
}

// renderWith serves a request with h and returns the status, the headers kept and
// the body, ungzipped when gzip'd.
func renderWith(t *testing.T, h http.Handler, accept, encoding string) (int, http.Header, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if encoding != "" {
		req.Header.Set("Accept-Encoding", encoding)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	body := rec.Body.Bytes()
	if rec.Header().Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	hdr := http.Header{}
	for _, k := range []string{"Content-Type", "Content-Encoding", "Vary"} {
		if v, ok := rec.Header()[k]; ok {
			hdr[k] = v
		}
	}
	return rec.Code, hdr, string(body)
}

// stable drops the lines of the families whose values move between two
// renders (the Go runtime's and the process's).
func stable(s string) string {
	var out []string
	for _, l := range strings.SplitAfter(s, "\n") {
		name := strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(l, "# HELP "), "# TYPE "), "# UNIT ")
		if strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "")
}

// The exporter's families rendered one at a time are what promhttp over
// the whole registry renders, byte for byte, in every format and
// encoding: the same families, series, values, HELP and TYPE lines, the
// same headers.
func TestStreamedExpositionIsPromhttps(t *testing.T) {
	reg, done := streamState(t)
	defer done()
	streamedH := promHandler(reg, log.NewNopLogger())
	sr, ok := streamedH.(*streamRenderer)
	if !ok {
		t.Fatal("NewRegistry's registry is not rendered a family at a time")
	}
	wholeH := promhttp.HandlerFor(newCheckedGatherer(reg, log.NewNopLogger()), promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError, EnableOpenMetrics: true})
	for _, accept := range []string{"", "text/plain; version=0.0.4",
		"application/openmetrics-text; version=1.0.0; charset=utf-8",
		"application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
		"application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited"} {
		for _, enc := range []string{"", "gzip", "identity", "br;q=1.0, gzip;q=0.8", "zstd"} {
			code, hdr, body := renderWith(t, streamedH, accept, enc)
			wcode, whdr, wbody := renderWith(t, wholeH, accept, enc)
			if code != wcode || !equalHeaders(hdr, whdr) {
				t.Fatalf("Accept %q, Accept-Encoding %q: %d %v, promhttp %d %v", accept, enc, code, hdr, wcode, whdr)
			}
			if strings.Contains(accept, "protobuf") {
				continue // binary: its values move; the headers are checked
			}
			got, want := stable(body), stable(wbody)
			if got != want {
				t.Fatalf("Accept %q, Accept-Encoding %q: the expositions differ at byte %d:\n%s\npromhttp's:\n%s",
					accept, enc, firstDiff(got, want), around(got, firstDiff(got, want)), around(want, firstDiff(got, want)))
			}
			if !strings.Contains(got, "ibtracer_link_suspicion") || !strings.Contains(got, "ibtracer_hop_") ||
				!strings.Contains(got, `\"quoted\"`) || !strings.Contains(got, "ibtracer_mad_rtt_seconds") {
				t.Fatalf("the state lacks the series the test is for:\n%s", got)
			}
		}
	}
	if n := sr.whole.Load(); n != 0 {
		t.Fatalf("%d renders left to promhttp: the test compared promhttp with itself", n)
	}
}

func equalHeaders(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if strings.Join(v, "\x00") != strings.Join(b[k], "\x00") {
			return false
		}
	}
	return true
}

func firstDiff(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

func around(s string, i int) string {
	lo, hi := max(0, i-300), min(len(s), i+300)
	return s[lo:hi]
}

// streamedBad is badLabels rendered a family at a time, with a
// duplicate series and a family of the exporter's beside it.
type streamedBad struct{ badLabels }

func (b streamedBad) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(desc("zz_after", "A family after scrape_errors_total."), prometheus.GaugeValue, 1)
	ch <- prometheus.MustNewConstMetric(b.d, prometheus.GaugeValue, 2, "good")
	b.badLabels.Collect(ch) // "good" again, then a panic
}

// A series left out of a family rendered alone (a duplicate, a
// collector's panic) is counted in the same scrape, whatever family it
// belongs to, as when the registry is gathered whole: the two renders are
// the same.
func TestStreamedExpositionCountsLeftOutSeries(t *testing.T) {
	d := prometheus.NewDesc("test_bad_labels", "A collector with a bad label value.", []string{"dest"}, nil)
	reg := newRegistry([]prometheus.Collector{streamedBad{badLabels{d}}})
	streamedH := promHandler(reg, log.NewNopLogger())
	if _, ok := streamedH.(*streamRenderer); !ok {
		t.Fatal("not rendered a family at a time")
	}
	wholeH := promhttp.HandlerFor(newCheckedGatherer(reg, log.NewNopLogger()), promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError, EnableOpenMetrics: true})
	for i := 0; i < 2; i++ {
		_, _, body := renderWith(t, streamedH, "", "")
		_, _, want := renderWith(t, wholeH, "", "")
		if stable(body) != stable(want) {
			t.Fatalf("scrape %d:\n%s\npromhttp's:\n%s", i, stable(body), stable(want))
		}
		if n := []string{"3", "6"}[i]; !strings.Contains(body, "ibtracer_scrape_errors_total "+n+"\n") ||
			!strings.Contains(body, `test_bad_labels{dest="good"} 2`) || !strings.Contains(body, "ibtracer_zz_after 1") {
			t.Fatalf("scrape %d: want %s errors, the good series and the family after:\n%s", i, n, stable(body))
		}
	}
}

// What the streamed render does not reproduce is left to promhttp: a
// ?name[] filter.
func TestStreamedExpositionLeavesTheRestToPromhttp(t *testing.T) {
	d := prometheus.NewDesc("ibtracer_zz_after", "A family after scrape_errors_total.", nil, nil)
	reg := newRegistry([]prometheus.Collector{streamedBad{badLabels{d}}})
	h := promHandler(reg, log.NewNopLogger())
	sr := h.(*streamRenderer)
	_, _, body := renderWith(t, h, "", "")
	if sr.whole.Load() != 0 || !strings.Contains(body, "ibtracer_zz_after 1") {
		t.Fatalf("rendered whole %d times:\n%s", sr.whole.Load(), body)
	}
	req := httptest.NewRequest(http.MethodGet, "/metrics?name[]=ibtracer_zz_after", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if sr.whole.Load() != 1 || strings.Contains(rec.Body.String(), "go_") {
		t.Fatalf("?name[]: rendered whole %d times:\n%s", sr.whole.Load(), rec.Body.String())
	}
}

// A collector registered on the Registry after NewRegistry is in the
// streamed render too, as in the registry's Gather: Register reaches both
// parts, and Unregister both.
func TestRegistryRegisterReachesTheStreamedRender(t *testing.T) {
	d := prometheus.NewDesc("ibtracer_zz_after", "A family after scrape_errors_total.", nil, nil)
	reg := newRegistry([]prometheus.Collector{streamedBad{badLabels{d}}})
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "test_registered_later", Help: "Registered after NewRegistry."})
	g.Set(7)
	reg.MustRegister(g)
	if err := reg.Register(g); err == nil {
		t.Fatal("a second Register of the same collector succeeded")
	}
	h := promHandler(reg, log.NewNopLogger())
	_, _, body := renderWith(t, h, "", "")
	if !strings.Contains(body, "test_registered_later 7\n") || h.(*streamRenderer).whole.Load() != 0 {
		t.Fatalf("the streamed render lacks the collector registered later:\n%s", stable(body))
	}
	if !reg.Unregister(g) {
		t.Fatal("Unregister: not registered")
	}
	if _, _, body := renderWith(t, h, "", ""); strings.Contains(body, "test_registered_later") {
		t.Fatalf("unregistered, still rendered:\n%s", stable(body))
	}
}
