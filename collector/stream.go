package collector

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

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
// are grouped by family name (its samples copied, 32 bytes a series),
// and each family is gathered by a registry of its own (the same checks,
// the same sorting: client_golang's code) and encoded by expfmt's
// encoder straight into the answer (gzip'd when asked), so that only one
// family's dto.Metrics are alive at a time (docs/exporter.md, "Scrape
// memory"). Only the families that sort after the count of the series
// left out (ibtracer_scrape_errors_total, in the same answer) are
// rendered before it and held until it is written. The rest of the
// registry (the Go runtime, the process, the other collectors) is
// gathered as before. promhttp negotiates the format and the encoding (an
// empty render of its own, whose headers are kept); anything this path
// does not reproduce exactly (a family name the exporter shares with
// another collector, a family named like a series of a histogram or
// summary of another, a ?name[] filter, an encoding other than gzip) is
// rendered by promhttp whole, as before.

// streamRenderer renders /metrics with the streamed collectors' families
// encoded one at a time.
type streamRenderer struct {
	reg      *Registry
	checked  *checkedGatherer // counts and logs what is left out
	ownNames []string         // checked's own families, sorted
	full     http.Handler     // promhttp over the whole registry
	logger   log.Logger
	whole    atomic.Uint64 // renders left to full (tests)
}

func newStreamRenderer(reg *Registry, checked *checkedGatherer, full http.Handler, logger log.Logger) *streamRenderer {
	s := &streamRenderer{reg: reg, checked: checked, full: full, logger: logger}
	own, _ := checked.own.Gather() // its names: the values do not matter
	for _, mf := range own {
		s.ownNames = append(s.ownNames, mf.GetName())
	}
	sort.Strings(s.ownNames)
	return s
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

// negotiate returns the headers and the format promhttp answers r with;
// ok is false when this path does not reproduce promhttp's answer (a
// ?name[] filter, an encoding other than gzip).
func negotiate(r *http.Request) (hdr http.Header, format expfmt.Format, ok bool) {
	if r.URL != nil && len(r.URL.Query()["name[]"]) > 0 {
		return nil, "", false
	}
	probe := httptest.NewRecorder()
	emptyHandler.ServeHTTP(probe, r)
	enc := probe.Header().Get("Content-Encoding")
	if probe.Code != http.StatusOK || (enc != "" && enc != "gzip") {
		return nil, "", false
	}
	return probe.Header(), expfmt.Format(probe.Header().Get("Content-Type")), true
}

func (s *streamRenderer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr, format, ok := negotiate(r)
	if !ok {
		s.renderWhole(w, r)
		return
	}
	sc := s.collect()
	if !sc.streamable() {
		s.renderWhole(w, r)
		return
	}
	for k, v := range hdr {
		w.Header()[k] = v
	}
	out := io.Writer(w)
	if hdr.Get("Content-Encoding") == "gzip" {
		gz := gzipPool.Get().(*gzip.Writer)
		gz.Reset(w)
		defer func() { _ = gz.Close(); gzipPool.Put(gz) }()
		out = gz
	}
	sc.write(out, format)
}

// streamScrape is one streamed render: the exporters' metrics by family name,
// the rest gathered, and what was left out so far.
type streamScrape struct {
	s      *streamRenderer
	groups map[string]*family
	rest   []*dto.MetricFamily
	errs   prometheus.MultiError // the collectors' panics, then the rest's
}

// collect runs the streamed collectors once, their metrics grouped by
// family name, and gathers the rest of the registry.
func (s *streamRenderer) collect() *streamScrape {
	sc := &streamScrape{s: s, groups: map[string]*family{}}
	names := map[*prometheus.Desc]string{}
	ch := make(chan prometheus.Metric, 1024)
	var panics prometheus.MultiError // written before ch is closed
	go func() {
		defer close(ch)
		for _, c := range s.reg.streamed {
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
		f := sc.groups[name]
		if f == nil {
			f = &family{}
			sc.groups[name] = f
		}
		f.add(m)
	}
	rest, err := s.reg.rest.Gather()
	sc.rest, sc.errs = rest, appendErrs(panics, err)
	return sc
}

// appendErrs appends err, or each error of a MultiError, to errs.
func appendErrs(errs prometheus.MultiError, err error) prometheus.MultiError {
	if err == nil {
		return errs
	}
	var multi prometheus.MultiError
	if errors.As(err, &multi) {
		return append(errs, multi...)
	}
	return append(errs, err)
}

// streamable reports whether rendering the families apart gives what
// the registry renders whole: no family from both sides (the registry
// merges them), and no family named as a histogram's or summary's series
// (the registry leaves such a series out, and says which).
func (sc *streamScrape) streamable() bool {
	complex := map[string]bool{} // a family that may be a histogram or a summary
	for _, mf := range sc.rest {
		if _, ok := sc.groups[mf.GetName()]; ok {
			return false
		}
		t := mf.GetType()
		complex[mf.GetName()] = t == dto.MetricType_SUMMARY || t == dto.MetricType_HISTOGRAM || t == dto.MetricType_GAUGE_HISTOGRAM
	}
	for n, g := range sc.groups {
		complex[n] = !g.samplesOnly() // a sample is a gauge or a counter
	}
	for n, c := range complex {
		if !c {
			continue
		}
		for _, suf := range []string{"_count", "_sum", "_bucket"} {
			if _, ok := complex[n+suf]; ok {
				return false
			}
		}
	}
	return true
}

// write encodes every family into out in name order, as the registry
// sorts them. The exporters' families that sort after the count of the
// series left out are rendered first, since the count includes theirs;
// the others are rendered as they are written.
func (sc *streamScrape) write(out io.Writer, format expfmt.Format) {
	logErr := func(err error) {
		promLogger{sc.s.logger}.Println("error encoding and sending metric family:", err)
	}
	type item struct {
		name string
		mf   *dto.MetricFamily // a family of the rest
		own  bool              // a family of the count of series left out
		held *bufferedWriter   // a family rendered before the count
	}
	firstOwn := ""
	if len(sc.s.ownNames) > 0 {
		firstOwn = sc.s.ownNames[0]
	}
	items := make([]item, 0, len(sc.rest)+len(sc.s.ownNames)+len(sc.groups))
	for _, mf := range sc.rest {
		items = append(items, item{name: mf.GetName(), mf: mf})
	}
	for _, n := range sc.s.ownNames {
		items = append(items, item{name: n, own: true})
	}
	for n := range sc.groups {
		items = append(items, item{name: n})
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].name < items[j].name })

	var after prometheus.MultiError // what the families held left out
	for i := range items {
		if it := &items[i]; it.mf == nil && !it.own && it.name > firstOwn {
			it.held = &bufferedWriter{header: http.Header{}}
			after = append(after, sc.render(it.name, expfmt.NewEncoder(it.held, format), logErr)...)
		}
	}
	e := expfmt.NewEncoder(out, format)
	var own map[string]*dto.MetricFamily // once counted
	for _, it := range items {
		switch {
		case it.mf != nil:
			if err := e.Encode(it.mf); err != nil {
				logErr(err)
			}
		case it.own:
			if own == nil {
				own = sc.account(after)
			}
			if mf := own[it.name]; mf != nil {
				if err := e.Encode(mf); err != nil {
					logErr(err)
				}
			}
		case it.held != nil:
			for _, c := range it.held.chunks {
				if _, err := out.Write(c); err != nil {
					logErr(err)
					break
				}
			}
			it.held.chunks = nil // written: the collector may have it
		default:
			sc.errs = append(sc.errs, sc.render(it.name, e, logErr)...)
		}
	}
	if own == nil {
		sc.account(after)
	}
	if c, ok := e.(expfmt.Closer); ok {
		if err := c.Close(); err != nil {
			logErr(err)
		}
	}
}

// render gathers the family name by a registry of its own, encodes it
// with e, and returns what the registry left out.
func (sc *streamScrape) render(name string, e expfmt.Encoder, logErr func(error)) prometheus.MultiError {
	reg := prometheus.NewRegistry()
	if err := reg.Register(sc.groups[name]); err != nil {
		return prometheus.MultiError{err}
	}
	delete(sc.groups, name) // its samples go with its render
	mfs, err := reg.Gather()
	for _, mf := range mfs {
		if err := e.Encode(mf); err != nil {
			logErr(err)
		}
	}
	return appendErrs(nil, err)
}

// account counts and logs what the scrape left out (its errors, then
// after's) and returns the count's families by name.
func (sc *streamScrape) account(after prometheus.MultiError) map[string]*dto.MetricFamily {
	var err error
	if errs := append(sc.errs, after...); len(errs) > 0 {
		err = errs
	}
	own, ownErr := sc.s.checked.account(err) // counted and logged there, as Gather does
	if ownErr != nil {
		promLogger{sc.s.logger}.Println("error gathering metrics:", ownErr)
		return map[string]*dto.MetricFamily{}
	}
	m := make(map[string]*dto.MetricFamily, len(own))
	for _, mf := range own {
		m[mf.GetName()] = mf
	}
	return m
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

// family is the metrics of one family collected, in the order they
// were, until the family is rendered: a sample is copied into 32 bytes
// (the array Collect built it in, a destination's for all its families,
// is free at once), the other metrics are kept as they are. As an
// unchecked collector, it sends them again.
type family struct {
	metrics []packed
	others  []prometheus.Metric
}

// packed is a sample collected, its label set kept as its first pair
// and its length (a label set is never modified, labels.go), else (desc
// nil) the index of a metric in its family's others.
type packed struct {
	desc   *prometheus.Desc
	labels **dto.LabelPair
	val    float64
	n      uint32
	typ    uint8 // a prometheus.ValueType
}

func (f *family) add(m prometheus.Metric) {
	if sm, ok := m.(*sample); ok && sm.desc != nil && uint64(len(sm.labels)) <= math.MaxUint32 && sm.typ >= 0 && sm.typ <= math.MaxUint8 {
		f.metrics = append(f.metrics, packed{desc: sm.desc, labels: unsafe.SliceData(sm.labels), n: uint32(len(sm.labels)),
			val: sm.val, typ: uint8(sm.typ)})
		return
	}
	f.metrics = append(f.metrics, packed{n: uint32(len(f.others))})
	f.others = append(f.others, m)
}

func (*family) Describe(chan<- *prometheus.Desc) {}

func (f *family) Collect(ch chan<- prometheus.Metric) {
	for i := range f.metrics {
		if p := &f.metrics[i]; p.desc != nil {
			ch <- p
		} else {
			ch <- f.others[p.n]
		}
	}
}

// samplesOnly reports whether every metric of f is a sample (a gauge or a
// counter).
func (f *family) samplesOnly() bool { return len(f.others) == 0 }

func (p *packed) Desc() *prometheus.Desc { return p.desc }

func (p *packed) Write(out *dto.Metric) error {
	s := sample{desc: p.desc, labels: unsafe.Slice(p.labels, p.n), typ: prometheus.ValueType(p.typ), val: p.val}
	return s.Write(out)
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
