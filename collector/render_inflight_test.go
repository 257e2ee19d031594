package collector

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibtracer/ibtracer_exporter/collector/pages"
	"github.com/ibtracer/ibtracer_exporter/internal/webserve"
)

// A client that sends a request and never reads the answer holds no
// in-flight slot: with more such clients stalled in the write than there
// are slots, a real scrape of /metrics and a real /traces request are
// still answered (docs/architecture.md, "HTTP pages and logs").
func TestStalledReadersHoldNoSlot(t *testing.T) {
	e := bigExporter(t, 50)
	defer e.Stop()
	for _, c := range []struct {
		name  string
		h     http.Handler
		slots int
	}{
		{"metrics", MetricsHandler(NewRegistry(e), 3, log.NewNopLogger()), 3},
		{"traces", e.TracesHandler(), pages.TracesInFlight},
	} {
		t.Run(c.name, func(t *testing.T) {
			stalled := 2 * c.slots
			started, release := make(chan struct{}), make(chan struct{})
			var wg sync.WaitGroup
			for range stalled {
				wg.Add(1)
				go func() {
					defer wg.Done()
					w := &blockingWriter{discardWriter: discardWriter{header: http.Header{}}, started: started, release: release}
					c.h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
				}()
			}
			defer func() { close(release); wg.Wait() }()
			for i := range stalled {
				select {
				case <-started:
				case <-time.After(30 * time.Second):
					t.Fatalf("only %d of %d stalled requests reached their first write", i, stalled)
				}
			}
			w := &discardWriter{header: http.Header{}}
			done := make(chan struct{})
			go func() { c.h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil)); close(done) }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("the real request waited for the stalled ones")
			}
			if w.code != http.StatusOK || w.n == 0 {
				t.Fatalf("real request beside %d stalled readers (%d slots): status %d, %d bytes; want 200 with a body",
					stalled, c.slots, w.code, w.n)
			}
		})
	}
}

// blockingCollector blocks in Collect until release is closed, after
// reporting on started: a scrape held while it renders (once release is
// closed, it no longer blocks).
type blockingCollector struct {
	started chan<- struct{}
	release <-chan struct{}
}

func (blockingCollector) Describe(chan<- *prometheus.Desc) {}
func (b blockingCollector) Collect(chan<- prometheus.Metric) {
	select {
	case b.started <- struct{}{}:
		<-b.release
	case <-b.release:
	}
}

// While limit requests render, one more is refused at once with 503;
// once they finish, requests are served again. For /metrics the render is
// held in a collector; /traces renders with the same limiter, held here
// in a handler before its first write.
func TestInFlightLimitWhileRendering(t *testing.T) {
	e := bigExporter(t, 5)
	defer e.Stop()
	t.Run("metrics", func(t *testing.T) {
		started, release := make(chan struct{}), make(chan struct{})
		reg := NewRegistry(e, blockingCollector{started, release})
		testRenderLimit(t, MetricsHandler(reg, 3, log.NewNopLogger()), 3, started, release)
	})
	t.Run("limiter", func(t *testing.T) {
		started, release := make(chan struct{}), make(chan struct{})
		var once sync.Map
		h := webserve.LimitInFlight(pages.TracesInFlight, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, held := once.LoadOrStore(r, true); !held && r.Header.Get("X-Hold") != "" {
				started <- struct{}{}
				<-release
			}
			_, _ = w.Write([]byte("ok\n"))
		}))
		testRenderLimit(t, h, pages.TracesInFlight, started, release)
	})
}

// testRenderLimit sends limit requests marked X-Hold (h holds them in
// their render until release is closed, after reporting on started), then
// one more, which must get 503 at once; after release, a request gets 200.
func testRenderLimit(t *testing.T, h http.Handler, limit int, started <-chan struct{}, release chan struct{}) {
	t.Helper()
	var wg sync.WaitGroup
	for i := range limit {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			req.Header.Set("X-Hold", "1")
			// Each in its own form: scrapes of one form share a render
			// (renderFirst).
			req.Header.Set("Accept", fmt.Sprintf("text/plain;q=0.%d", i+1))
			h.ServeHTTP(&discardWriter{header: http.Header{}}, req)
		}()
	}
	for i := range limit {
		select {
		case <-started:
		case <-time.After(30 * time.Second):
			t.Fatalf("only %d of %d requests started", i, limit)
		}
	}
	w := &discardWriter{header: http.Header{}}
	done := make(chan struct{})
	go func() { h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil)); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the request over the limit waited")
	}
	close(release)
	wg.Wait()
	if w.code != http.StatusServiceUnavailable {
		t.Fatalf("request over the limit of %d: status %d, want 503", limit, w.code)
	}
	w = &discardWriter{header: http.Header{}}
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	if w.code != http.StatusOK {
		t.Fatalf("after the others finished: status %d", w.code)
	}
}

// Scrapes that arrive while an answer of their form is being rendered
// share it: one render, every scrape answered whole with the same body
// (four renders side by side held 490 MB at 10,000 destinations:
// BenchmarkScrapeMemoryAtScale).
func TestScrapesOfOneFormShareARender(t *testing.T) {
	e := bigExporter(t, 5)
	defer e.Stop()
	started, release := make(chan struct{}, 8), make(chan struct{})
	h := MetricsHandler(NewRegistry(e, blockingCollector{started, release}), 4, log.NewNopLogger())
	const n = 4
	var wg sync.WaitGroup
	ws := make([]*discardBody, n)
	for i := range n {
		ws[i] = &discardBody{header: http.Header{}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.ServeHTTP(ws[i], httptest.NewRequest(http.MethodGet, "/", nil))
		}()
		if i == 0 {
			<-started // the first render is under way; the others join it
		}
	}
	time.Sleep(200 * time.Millisecond) // the others wait
	close(release)
	wg.Wait()
	if extra := len(started); extra != 0 {
		t.Fatalf("%d renders more than one for %d scrapes of one form", extra, n)
	}
	for i, w := range ws {
		if w.code != http.StatusOK || w.body.Len() == 0 || w.body.String() != ws[0].body.String() {
			t.Fatalf("scrape %d: status %d, %d bytes; want 200 and the first scrape's %d bytes", i, w.code, w.body.Len(), ws[0].body.Len())
		}
	}
}

// discardBody is a ResponseWriter that keeps the body.
type discardBody struct {
	header http.Header
	code   int
	body   strings.Builder
}

func (w *discardBody) Header() http.Header { return w.header }
func (w *discardBody) WriteHeader(c int) {
	if w.code == 0 {
		w.code = c
	}
}
func (w *discardBody) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(p)
}
