package collector

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// A /metrics render through Registry.Gather holds a dto.Metric (with its
// value and pointers, about 0.2 KB, and the pieces the registry checks it
// with) for every series of the scrape at once, before the first byte is
// encoded: at 10,000 destinations with health and evidence (520,000
// series) one render added some 345 MiB of RSS. The exporter's series
// (the per-destination families, nearly all of them) are instead rendered
// a family at a time: the exporter's Collect is run once and its metrics
// are grouped by family name (its samples copied, 64 bytes a series),
// and each family is gathered by a registry of its own
// (the same checks, the same sorting: client_golang's code) and encoded
// by expfmt's encoder at once, so that only one family's dto.Metrics are
// alive at a time (docs/exporter.md, "Scrape memory"). The rest of the
// registry (the Go runtime, the process, the other collectors) is
// gathered as before. promhttp negotiates the format and the encoding
// (an empty render of its own, whose headers are kept); anything this
// path does not reproduce exactly (a family name the exporter shares with
// another collector, a histogram's suffix collision across collectors,
// a ?name[] filter, an encoding other than gzip) is rendered by promhttp
// whole, as before.

// streamed marks the collectors rendered a family at a time.
type streamed interface {
	prometheus.Collector
	streamedCollector()
}

func (e *Exporter) streamedCollector() {}

// regParts is how NewRegistry built a registry: the registry (everything,
// for Gather) and, apart, the registry of the rest and the streamed
// collectors.
type regParts struct {
	rest *prometheus.Registry
	big  []prometheus.Collector
}

var registryParts sync.Map // *prometheus.Registry → *regParts

// streamRenderer renders /metrics with the streamed collectors' families
// encoded one at a time.
type streamRenderer struct {
	parts   *regParts
	checked *checkedGatherer // counts and logs what is left out
	full    http.Handler     // promhttp over the whole registry
	logger  log.Logger
	whole   atomic.Uint64 // renders left to full (tests)
}

// renderWhole renders r by promhttp over the whole registry.
func (s *streamRenderer) renderWhole(w http.ResponseWriter, r *http.Request) {
	s.whole.Add(1)
	s.full.ServeHTTP(w, r)
}

// emptyHandler is promhttp over nothing (no family, no error): its
// answer's headers are those promhttp negotiates for a request.
var emptyHandler = promhttp.HandlerFor(prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) { return nil, nil }),
	promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError, EnableOpenMetrics: true})

func (s *streamRenderer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL != nil && len(r.URL.Query()["name[]"]) > 0 {
		s.renderWhole(w, r)
		return
	}
	probe := httptest.NewRecorder()
	emptyHandler.ServeHTTP(probe, r)
	enc := probe.Header().Get("Content-Encoding")
	if probe.Code != http.StatusOK || (enc != "" && enc != "gzip") {
		s.renderWhole(w, r)
		return
	}
	format := expfmt.Format(probe.Header().Get("Content-Type"))

	// The exporter's metrics, by family name.
	groups := map[string]replay{}
	names := map[*prometheus.Desc]string{}
	ch := make(chan prometheus.Metric, 1024)
	var panics prometheus.MultiError // written before ch is closed
	go func() {
		defer close(ch)
		for _, c := range s.parts.big {
			if err := safeCollect(c, ch); err != nil {
				panics = append(panics, err)
			}
		}
	}()
	for m := range ch {
		d := m.Desc()
		name, ok := names[d]
		if !ok {
			name = descName(d)
			names[d] = name
		}
		// A sample is copied: the array Collect built it in (a
		// destination's, for all its families) is free at once, and
		// the copy with its family's render.
		if sm, ok := m.(*sample); ok {
			groups[name] = append(groups[name], collected{s: *sm})
		} else {
			groups[name] = append(groups[name], collected{m: m})
		}
	}

	rest, restErr := s.parts.rest.Gather()
	errs := panics
	if restErr != nil {
		var multi prometheus.MultiError
		if errors.As(restErr, &multi) {
			errs = append(errs, multi...)
		} else {
			errs = append(errs, restErr)
		}
	}
	types := map[string]dto.MetricType{}
	for _, mf := range rest {
		if _, ok := groups[mf.GetName()]; ok {
			s.renderWhole(w, r) // one family from two sides: the registry merges them
			return
		}
		types[mf.GetName()] = mf.GetType()
	}

	// Each family gathered and encoded on its own, in name order.
	bigNames := make([]string, 0, len(groups))
	for n := range groups {
		bigNames = append(bigNames, n)
	}
	sort.Strings(bigNames)
	texts := make(map[string]*bufferedWriter, len(groups))
	defer func() {
		for _, b := range texts {
			b.free()
		}
	}()
	for _, n := range bigNames {
		reg := prometheus.NewRegistry()
		if err := reg.Register(groups[n]); err != nil {
			errs = append(errs, err)
			continue
		}
		delete(groups, n) // its samples go with its render
		mfs, err := reg.Gather()
		if err != nil {
			var multi prometheus.MultiError
			if errors.As(err, &multi) {
				errs = append(errs, multi...)
			} else {
				errs = append(errs, err)
			}
		}
		if len(mfs) == 0 {
			continue
		}
		b := &bufferedWriter{header: http.Header{}}
		texts[n] = b
		fe := expfmt.NewEncoder(b, format)
		for _, mf := range mfs {
			types[mf.GetName()] = mf.GetType()
			if err := fe.Encode(mf); err != nil {
				promLogger{s.logger}.Println("error encoding and sending metric family:", err)
			}
		}
	}
	if suffixCollision(types) {
		s.renderWhole(w, r) // the registry would leave a series out, and say which
		return
	}
	var gerr error
	if len(errs) > 0 {
		gerr = errs
	}
	own, ownErr := s.checked.account(gerr) // counted and logged there, as Gather does
	if ownErr != nil {
		own = nil
		promLogger{s.logger}.Println("error gathering metrics:", ownErr)
	}

	// The families in name order, as the registry sorts them.
	type item struct {
		name string
		mf   *dto.MetricFamily
	}
	items := make([]item, 0, len(rest)+len(own)+len(texts))
	for _, mf := range append(rest, own...) {
		items = append(items, item{mf.GetName(), mf})
	}
	for n := range texts {
		items = append(items, item{name: n})
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].name < items[j].name })

	for k, v := range probe.Header() {
		w.Header()[k] = v
	}
	out := io.Writer(w)
	if enc == "gzip" {
		gz := gzipPool.Get().(*gzip.Writer)
		gz.Reset(w)
		defer func() { _ = gz.Close(); gzipPool.Put(gz) }()
		out = gz
	}
	e := expfmt.NewEncoder(out, format)
	for _, it := range items {
		if it.mf != nil {
			if err := e.Encode(it.mf); err != nil {
				promLogger{s.logger}.Println("error encoding and sending metric family:", err)
			}
			continue
		}
		b := texts[it.name]
		for _, c := range b.chunks {
			if _, err := out.Write(c); err != nil {
				promLogger{s.logger}.Println("error encoding and sending metric family:", err)
				break
			}
		}
		b.free()
		delete(texts, it.name)
	}
	if c, ok := e.(expfmt.Closer); ok {
		if err := c.Close(); err != nil {
			promLogger{s.logger}.Println("error encoding and sending metric family:", err)
		}
	}
}

var gzipPool = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}

// safeCollect is the registry's: a collector's panic is an error, and an
// invalid metric (a second error) where its series stop.
func safeCollect(c prometheus.Collector, ch chan<- prometheus.Metric) (err error) {
	defer func() {
		if r := recover(); r != nil {
			buf := make([]byte, 64<<10)
			n := runtime.Stack(buf, false)
			err = fmt.Errorf("prometheus collector panic recovered: type=%T: error=%v\nstack trace=%s", c, r, buf[:n])
			ch <- prometheus.NewInvalidMetric(prometheus.NewInvalidDesc(err), err)
		}
	}()
	c.Collect(ch)
	return nil
}

// collected is a metric collected: a sample (by value), else m.
type collected struct {
	s sample
	m prometheus.Metric
}

// replay is an unchecked collector that sends metrics already collected,
// in the order they were.
type replay []collected

func (replay) Describe(chan<- *prometheus.Desc) {}
func (r replay) Collect(ch chan<- prometheus.Metric) {
	for i := range r {
		if r[i].m != nil {
			ch <- r[i].m
		} else {
			ch <- &r[i].s
		}
	}
}

// descName is a Desc's fully-qualified name, from its String (the only
// way client_golang shows it): `Desc{fqName: "…", …}`.
func descName(d *prometheus.Desc) string {
	s := strings.TrimPrefix(d.String(), "Desc{fqName: ")
	q, err := strconv.QuotedPrefix(s)
	if err != nil {
		return d.String() // a family of its own; its registry reports what is wrong
	}
	name, _ := strconv.Unquote(q)
	return name
}

// suffixCollision reports whether a histogram's or summary's family
// collides with another family's name by suffix (_count, _sum, _bucket):
// Registry.Gather leaves such a series out, which a family gathered alone
// cannot see.
func suffixCollision(types map[string]dto.MetricType) bool {
	for n, t := range types {
		if t != dto.MetricType_SUMMARY && t != dto.MetricType_HISTOGRAM && t != dto.MetricType_GAUGE_HISTOGRAM {
			continue
		}
		for _, suf := range []string{"_count", "_sum", "_bucket"} {
			if _, ok := types[n+suf]; ok {
				return true
			}
		}
	}
	return false
}
