package collector

import (
	"fmt"
	"net/http"
	"runtime/metrics"
	"testing"

	"github.com/go-kit/log"

	"github.com/ibtracer/ibtracer_exporter/internal/webserve"
)

// wholeMetricsHandler is MetricsHandler with every render left to
// promhttp over the whole registry (streamRenderer.renderWhole), as
// before stream.go: the "without" of docs/architecture.md, "Rendering".
func wholeMetricsHandler(reg *Registry, maxInFlight int) http.Handler {
	s := webserve.NewSendBudget(webserve.DefaultSendBudget, log.NewNopLogger())
	reg.MustRegister(s.Collector())
	sr := promHandler(reg, log.NewNopLogger()).(*streamRenderer)
	return webserve.LimitInFlight(maxInFlight, renderFirst(s, http.HandlerFunc(sr.renderWhole)))
}

// BenchmarkScrapeRenderPaths reports the peak heap, the growth of the
// heap goal and the bytes allocated that one /metrics scrape (OpenMetrics, uncompressed)
// adds, rendered a family at a time (stream.go) and by promhttp whole,
// at the packaged sample (8 destinations), a few hundred and 10,000
// destinations with hop series, the figures of docs/architecture.md,
// "Rendering"
// (go test -run '^$' -bench RenderPaths -benchtime 1x ./collector).
func BenchmarkScrapeRenderPaths(b *testing.B) {
	for _, n := range []int{8, 300, 10000} {
		e := bigExporter(b, n)
		for _, path := range []string{"streamed", "whole"} {
			b.Run(fmt.Sprintf("destinations=%d/render=%s", n, path), func(b *testing.B) {
				reg := NewRegistry(e)
				var h http.Handler
				if path == "whole" {
					h = wholeMetricsHandler(reg, DefaultMetricsInFlight)
				} else {
					h = MetricsHandler(reg, DefaultMetricsInFlight, log.NewNopLogger())
				}
				allocs := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
				for i := 0; i < b.N; i++ {
					metrics.Read(allocs)
					before := allocs[0].Value.Uint64()
					peak, goal, ok, _ := scrapeStorm(b, h, "/", 1)
					metrics.Read(allocs)
					b.ReportMetric(float64(allocs[0].Value.Uint64()-before)/1e6, "alloc-MB")
					if ok != 1 {
						b.Fatalf("%d scrapes answered 200 of 1", ok)
					}
					b.ReportMetric(float64(peak)/1e6, "peak-MB")
					b.ReportMetric(float64(goal)/1e6, "goal-MB")
				}
			})
		}
		e.Stop()
	}
}
