package collector

import (
	"errors"
	"sort"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ibtracer/ibtracer_exporter/internal/fabricstr"
)

// scrapeErrorLogEvery is how often the same count of left-out series is
// logged again; a different count is logged at once.
const scrapeErrorLogEvery = 10 * time.Minute

// checkedGatherer gathers a registry for /metrics and never drops a
// series silently: what the client library refuses (a label value that is
// not valid UTF-8, a duplicate series, a collector's error) is counted in
// ibtracer_scrape_errors_total, in the same scrape, and logged in one
// short line (docs/metrics.md, "The exporter"). The rest of the scrape is
// served.
type checkedGatherer struct {
	inner  prometheus.Gatherer
	own    *prometheus.Registry // the counter, gathered after inner
	errs   prometheus.Counter
	logger log.Logger

	mu      sync.Mutex // guards lastN, lastLog
	lastN   int
	lastLog time.Time
}

func newCheckedGatherer(inner prometheus.Gatherer, logger log.Logger) *checkedGatherer {
	c := &checkedGatherer{inner: inner, own: prometheus.NewRegistry(), logger: logger,
		errs: prometheus.NewCounter(prometheus.CounterOpts{Namespace: namespace, Name: "scrape_errors_total",
			Help: "Series or collectors a /metrics scrape had to leave out (each scrape logs why); 0 unless something is wrong."})}
	c.own.MustRegister(c.errs)
	return c
}

// Gather implements prometheus.Gatherer.
func (c *checkedGatherer) Gather() ([]*dto.MetricFamily, error) {
	mfs, err := c.inner.Gather()
	own, ownErr := c.account(err)
	if ownErr != nil {
		return mfs, ownErr
	}
	mfs = append(mfs, own...)
	sort.Slice(mfs, func(i, j int) bool { return mfs[i].GetName() < mfs[j].GetName() })
	return mfs, nil
}

// account counts and logs what a gathering left out (err, nil when
// nothing) and returns the counter's family.
func (c *checkedGatherer) account(err error) ([]*dto.MetricFamily, error) {
	if err != nil {
		n := 1
		var multi prometheus.MultiError
		if errors.As(err, &multi) {
			n = len(multi)
			if n > 0 {
				err = multi[0]
			}
		}
		c.errs.Add(float64(n))
		c.log(n, err)
	}
	return c.own.Gather()
}

// log says how many series a scrape left out, and the first reason made
// printable and cut short, when the count changed or
// scrapeErrorLogEvery has passed.
func (c *checkedGatherer) log(n int, first error) {
	c.mu.Lock()
	now := time.Now()
	if n == c.lastN && now.Sub(c.lastLog) < scrapeErrorLogEvery {
		c.mu.Unlock()
		return
	}
	c.lastN, c.lastLog = n, now
	c.mu.Unlock()
	reason := fabricstr.String(first.Error())
	if len(reason) > 300 {
		k := 300
		for k > 0 && !utf8.RuneStart(reason[k]) { // never inside a character
			k--
		}
		reason = reason[:k] + "…"
	}
	level.Error(c.logger).Log("msg", "series left out of /metrics", "errors", n, "first", reason)
}
