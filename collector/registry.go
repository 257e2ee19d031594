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

// NewRegistry returns the registry /metrics serves: the exporter, the
// other collectors given (the engine's RTT histogram, the reload gauges),
// build info, and the Go runtime and process collectors.
//
// The scrape renders the exporter's families one at a time (stream.go):
// the registry's parts are kept apart for it.
func NewRegistry(cs ...prometheus.Collector) *prometheus.Registry {
	reg, rest := prometheus.NewRegistry(), prometheus.NewRegistry()
	base := []prometheus.Collector{versioncollector.NewCollector(namespace), newGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})}
	reg.MustRegister(base...)
	rest.MustRegister(base...)
	reg.MustRegister(cs...)
	parts := &regParts{rest: rest}
	for _, c := range cs {
		if b, ok := c.(streamed); ok {
			parts.big = append(parts.big, b)
		} else {
			rest.MustRegister(c)
		}
	}
	registryParts.Store(reg, parts)
	return reg
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
func MetricsHandler(reg *prometheus.Registry, maxInFlight int, logger log.Logger) http.Handler {
	return metricsHandler(reg, maxInFlight, webserve.DefaultSendBudget, logger)
}

// promHandler renders reg: the exporter's families one at a time when
// NewRegistry built reg (stream.go), else by promhttp.
func promHandler(reg *prometheus.Registry, logger log.Logger) http.Handler {
	checked := newCheckedGatherer(reg, logger)
	full := promhttp.HandlerFor(checked, promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError, ErrorLog: promLogger{logger}, EnableOpenMetrics: true})
	p, ok := registryParts.Load(reg)
	if !ok {
		return full
	}
	return &streamRenderer{parts: p.(*regParts), checked: checked, full: full, logger: logger}
}

// register registers c on reg and, when NewRegistry built reg, on the
// part the scrape gathers whole.
func register(reg *prometheus.Registry, c prometheus.Collector) {
	reg.MustRegister(c)
	if p, ok := registryParts.Load(reg); ok {
		p.(*regParts).rest.MustRegister(c)
	}
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
