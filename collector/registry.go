package collector

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ibtracer/ibtracer_exporter/internal/webserve"
)

// Registry is the registry /metrics serves (NewRegistry). It is a
// prometheus.Registry with everything registered, for Gather; apart, it
// keeps the exporters, whose families a scrape renders one at a time
// (stream.go), and a registry of the rest, gathered whole.
type Registry struct {
	*prometheus.Registry
	rest     *prometheus.Registry
	streamed []prometheus.Collector
}

// NewRegistry returns the registry /metrics serves: the exporter, the
// other collectors given (the engine's RTT histogram, the reload gauges),
// build info, and the Go runtime and process collectors.
func NewRegistry(cs ...prometheus.Collector) *Registry {
	var streamed, rest []prometheus.Collector
	for _, c := range cs {
		if e, ok := c.(*Exporter); ok {
			streamed = append(streamed, e)
		} else {
			rest = append(rest, c)
		}
	}
	return newRegistry(streamed, rest...)
}

// newRegistry is NewRegistry with the collectors rendered a family at a
// time given apart.
func newRegistry(streamed []prometheus.Collector, cs ...prometheus.Collector) *Registry {
	r := &Registry{Registry: prometheus.NewRegistry(), rest: prometheus.NewRegistry(), streamed: streamed}
	r.MustRegister(versioncollector.NewCollector(namespace), newGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	r.MustRegister(cs...)
	r.Registry.MustRegister(streamed...)
	return r
}

// Register registers c with the registry and with the rest, gathered
// whole by a scrape.
func (r *Registry) Register(c prometheus.Collector) error {
	if err := r.Registry.Register(c); err != nil {
		return err
	}
	if err := r.rest.Register(c); err != nil {
		r.Registry.Unregister(c)
		return err
	}
	return nil
}

// MustRegister registers cs as Register does, and panics on an error.
func (r *Registry) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

// Unregister unregisters c from the registry and the rest.
func (r *Registry) Unregister(c prometheus.Collector) bool {
	r.rest.Unregister(c)
	return r.Registry.Unregister(c)
}

// DefaultMetricsInFlight is the suggested limit of concurrent /metrics
// scrapes: a scrape at 1,000 destinations allocates about 19 MB (see
// BenchmarkScrape), and Prometheus servers scrape one at a time.
const DefaultMetricsInFlight = 4

// MetricsHandler serves reg as /metrics, OpenMetrics included, at most
// maxInFlight scrapes rendering at once (0: no limit); more get 503 at
// once. A scrape is rendered in memory before it is sent, and its slot
// is free while it is sent (limitInFlight, renderFirst).
// The answers waiting on their clients hold at most DefaultSendBudget
// bytes; past that the oldest is cut off (senders). A series the scrape
// must leave out is counted and logged (checkedGatherer).
func MetricsHandler(reg *Registry, maxInFlight int, logger log.Logger) http.Handler {
	return metricsHandler(reg, maxInFlight, webserve.DefaultSendBudget, logger)
}

// promHandler renders reg, the exporters' families one at a time
// (stream.go).
func promHandler(reg *Registry, logger log.Logger) http.Handler {
	checked := newCheckedGatherer(reg, logger)
	full := promhttp.HandlerFor(checked, promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError, ErrorLog: promLogger{logger}, EnableOpenMetrics: true})
	return newStreamRenderer(reg, checked, full, logger)
}

// promLogger logs promhttp's errors (a collector that failed) through
// go-kit.
type promLogger struct{ l log.Logger }

func (p promLogger) Println(v ...any) {
	level.Error(p.l).Log("msg", "serving /metrics", "err", fmt.Sprint(v...))
}

// The Go collector's go_memstats_alloc_bytes (gauge) and
// go_memstats_alloc_bytes_total (counter) are one family name in
// OpenMetrics, where a counter's family drops "_total": a duplicate that
// strict parsers reject. The counter is dropped; the same value is the
// runtime metric /gc/heap/allocs:bytes, exported as
// go_gc_heap_allocs_bytes_total. /gc/heap/live:bytes (go_gc_heap_live_bytes,
// the heap the last GC marked live) is added for scripts/soak.sh.
const goDroppedMetric = "go_memstats_alloc_bytes_total"

type goCollector struct {
	prometheus.Collector
	drop *prometheus.Desc
}

func newGoCollector() prometheus.Collector {
	c := collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(
		collectors.GoRuntimeMetricsRule{Matcher: regexp.MustCompile(`^/gc/heap/(allocs|live):bytes$`)}))
	ch := make(chan *prometheus.Desc, 256)
	go func() { c.Describe(ch); close(ch) }()
	g := &goCollector{Collector: c}
	for d := range ch {
		if strings.Contains(d.String(), `fqName: "`+goDroppedMetric+`"`) {
			g.drop = d
		}
	}
	return g
}

func (g *goCollector) Describe(ch chan<- *prometheus.Desc) {
	in := make(chan *prometheus.Desc)
	go func() { g.Collector.Describe(in); close(in) }()
	for d := range in {
		if d != g.drop {
			ch <- d
		}
	}
}

func (g *goCollector) Collect(ch chan<- prometheus.Metric) {
	in := make(chan prometheus.Metric)
	go func() { g.Collector.Collect(in); close(in) }()
	for m := range in {
		if m.Desc() != g.drop {
			ch <- m
		}
	}
}
