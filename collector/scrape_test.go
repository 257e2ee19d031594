package collector

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/ibtracer/ibtracer_exporter/collector/pages"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// bigExporter returns an exporter with n destinations, each with a
// recorded 4-hop trace (so per-hop series exist), and no running loops.
func bigExporter(tb testing.TB, n int) *Exporter {
	tb.Helper()
	var b strings.Builder
	b.WriteString("interval: 1h\ndestinations:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  - {name: d%04d, lid: %d, labels: {rack: r%d, role: compute}}\n", i, i+1, i%40)
	}
	c, err := configParse(b.String())
	if err != nil {
		tb.Fatal(err)
	}
	e := New(log.NewNopLogger(), "") // no seed, no device: the loops wait
	e.Apply(c)
	start := time.Now()
	for i, s := range e.destinations() {
		hops := []trace.Hop{{Hop: 0, NodeGUID: 0x10, NodeType: ibmad.NodeTypeCA, NodeDesc: "me", Agent: trace.AgentSource}}
		for h := 1; h <= 4; h++ {
			typ := ibmad.NodeTypeSwitch
			if h == 4 {
				typ = ibmad.NodeTypeCA
			}
			hops = append(hops, trace.Hop{Hop: h, NodeGUID: ibmad.GUID(0x1000 + h*97 + i), PortGUID: ibmad.GUID(0x1001 + h*97 + i),
				NodeType: typ, NodeDesc: fmt.Sprintf("node %d-%d", h, i), LID: uint16(h + i), InPort: 1, OutPort: 2,
				Agent: trace.AgentValidated, RTT: 3 * time.Microsecond, AgentRTT: 4 * time.Microsecond})
		}
		s.record(&trace.Result{Status: trace.StatusOK, Start: start, Duration: time.Millisecond, MADs: 9, Hops: hops})
	}
	return e
}

// heapPeak samples the runtime metric name (the heap's objects, or the
// heap's goal) until stop is closed and returns the largest value seen.
func heapPeak(stop <-chan struct{}, name string) <-chan uint64 {
	out := make(chan uint64, 1)
	go func() {
		s := []metrics.Sample{{Name: name}}
		var peak uint64
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak {
				peak = v
			}
			select {
			case <-stop:
				out <- peak
				return
			case <-time.After(200 * time.Microsecond):
			}
		}
	}()
	return out
}

// scrapeStorm sends n concurrent GETs to h and returns the peak heap
// (its objects, live or not yet collected) above the baseline, the peak
// growth of the heap's goal (the heap the runtime lets grow before it
// collects: twice the live heap at GOGC=100, what the process's RSS
// follows), and how many got 200 and 503.
func scrapeStorm(tb testing.TB, h http.Handler, path string, n int) (peak, goal uint64, ok, busy int) {
	tb.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n, DisableCompression: true}}
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	base, baseGoal := s[0].Value.Uint64(), s[1].Value.Uint64()
	stop := make(chan struct{})
	peakc, goalc := heapPeak(stop, s[0].Name), heapPeak(stop, s[1].Name)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		codes = map[int]int{}
		ready sync.WaitGroup
		go1   = make(chan struct{})
	)
	ready.Add(n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
			req.Header.Set("Accept", "application/openmetrics-text; version=1.0.0")
			ready.Done()
			<-go1
			resp, err := client.Do(req)
			if err != nil {
				tb.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			mu.Lock()
			codes[resp.StatusCode]++
			mu.Unlock()
		}()
	}
	ready.Wait()
	close(go1)
	wg.Wait()
	close(stop)
	p, g := <-peakc, <-goalc
	if p > base {
		peak = p - base
	}
	if g > baseGoal {
		goal = g - baseGoal
	}
	return peak, goal, codes[http.StatusOK], codes[http.StatusServiceUnavailable]
}

// BenchmarkScrapeStorm reports the peak live heap of 200 concurrent
// /metrics and /traces requests at 1,000 destinations
// (go test -run XXX -bench ScrapeStorm -benchtime 1x ./collector).
func BenchmarkScrapeStorm(b *testing.B) {
	e := bigExporter(b, 1000)
	defer e.Stop()
	reg := NewRegistry(e)
	for _, n := range []int{1, 200} {
		for _, limit := range []int{40, DefaultMetricsInFlight} {
			b.Run(fmt.Sprintf("metrics/concurrent=%d/limit=%d", n, limit), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					peak, goal, ok, busy := scrapeStorm(b, MetricsHandler(reg, limit, log.NewNopLogger()), "/", n)
					b.ReportMetric(float64(peak)/1e6, "peak-MB")
					b.ReportMetric(float64(goal)/1e6, "goal-MB")
					b.ReportMetric(float64(ok), "served")
					b.ReportMetric(float64(busy), "busy")
				}
			})
		}
		b.Run(fmt.Sprintf("traces/concurrent=%d/limit=%d", n, pages.TracesInFlight), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				peak, goal, ok, busy := scrapeStorm(b, e.TracesHandler(), "/", n)
				b.ReportMetric(float64(peak)/1e6, "peak-MB")
				b.ReportMetric(float64(goal)/1e6, "goal-MB")
				b.ReportMetric(float64(ok), "served")
				b.ReportMetric(float64(busy), "busy")
			}
		})
	}
}

// A scrape at 1,000 destinations allocates what its samples need, not
// every label pair of every series again (that was 45 MB; now about 19).
func TestScrapeAllocations(t *testing.T) {
	e := bigExporter(t, 1000)
	defer e.Stop()
	h := MetricsHandler(NewRegistry(e), 1, log.NewNopLogger())
	scrape := func() {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Header.Set("Accept", "application/openmetrics-text; version=1.0.0")
		w := &discardWriter{header: http.Header{}}
		h.ServeHTTP(w, req)
		if w.code != http.StatusOK {
			t.Fatalf("status %d", w.code)
		}
	}
	scrape()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const n = 3
	for i := 0; i < n; i++ {
		scrape()
	}
	runtime.ReadMemStats(&after)
	per := float64(after.TotalAlloc-before.TotalAlloc) / n / 1e6
	t.Logf("%.1f MB allocated per scrape at 1,000 destinations", per)
	if per > 25 {
		t.Fatalf("%.1f MB allocated per scrape at 1,000 destinations, want at most 25", per)
	}
}

// BenchmarkScrape is one /metrics scrape (OpenMetrics) at 1,000
// destinations; allocated bytes per scrape are the per-scrape cost.
func BenchmarkScrape(b *testing.B) {
	e := bigExporter(b, 1000)
	defer e.Stop()
	h := MetricsHandler(NewRegistry(e), 40, log.NewNopLogger())
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Accept", "application/openmetrics-text; version=1.0.0")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w := &discardWriter{header: http.Header{}}
		h.ServeHTTP(w, req)
		if w.code != http.StatusOK || w.n == 0 {
			b.Fatal(w.code, w.n)
		}
	}
}

// discardWriter is a ResponseWriter that keeps nothing.
type discardWriter struct {
	header http.Header
	code   int
	n      int
}

func (w *discardWriter) Header() http.Header { return w.header }
func (w *discardWriter) WriteHeader(c int) {
	if w.code == 0 {
		w.code = c
	}
}
func (w *discardWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.n += len(p)
	return len(p), nil
}

// blockingWriter is a ResponseWriter whose first Write reports on started
// and then blocks until release is closed: a client that does not read.
type blockingWriter struct {
	discardWriter
	started chan<- struct{}
	release <-chan struct{}
	once    sync.Once
}

func (w *blockingWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { w.started <- struct{}{}; <-w.release })
	return w.discardWriter.Write(p)
}

// /traces streams the same JSON that Traces() holds.
func TestTracesHandlerJSON(t *testing.T) {
	for _, n := range []int{0, 3} {
		e := bigExporter(t, n)
		w := httptest.NewRecorder()
		e.TracesHandler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/traces", nil))
		var got, want []any
		if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
			t.Fatalf("%d destinations: %v\n%s", n, err, w.Body.String())
		}
		b, _ := json.Marshal(e.Traces())
		_ = json.Unmarshal(b, &want)
		if len(got) != n || !reflect.DeepEqual(got, append([]any{}, want...)) {
			t.Fatalf("%d destinations: /traces\n%s\nwant %s", n, w.Body.String(), b)
		}
		e.Stop()
	}
}

// BenchmarkScrapeMemoryAtScale reports the peak heap that 1 and 4
// concurrent /metrics scrapes add at 10,000 destinations with hop series
// (about 280,000 series, 30 MB of OpenMetrics text), the figure of
// docs/exporter.md, "Scrape memory"
// (go test -run XXX -bench ScrapeMemoryAtScale -benchtime 1x ./collector).
func BenchmarkScrapeMemoryAtScale(b *testing.B) {
	e := bigExporter(b, 10000)
	defer e.Stop()
	reg := NewRegistry(e)
	h := MetricsHandler(reg, DefaultMetricsInFlight, log.NewNopLogger())
	for _, n := range []int{1, 4} {
		b.Run(fmt.Sprintf("concurrent=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				peak, goal, ok, busy := scrapeStorm(b, h, "/", n)
				b.ReportMetric(float64(peak)/1e6, "peak-MB")
				b.ReportMetric(float64(goal)/1e6, "goal-MB")
				b.ReportMetric(float64(ok), "served")
				b.ReportMetric(float64(busy), "busy")
			}
		})
	}
}
