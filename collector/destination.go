package collector

import (
	"hash/fnv"
	"sync"
	"time"
	"unique"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibtracer/ibtracer_exporter/collector/config"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/linkhealth"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// Histogram buckets: traces take milliseconds to seconds; an agent's
// round trip takes microseconds to milliseconds.
var (
	durationBuckets = []float64{.001, .005, .025, .1, .5, 2.5, 10}
	latencyBuckets  = []float64{.00001, .00005, .0001, .0005, .001, .005, .025, .1}
)

// hists are the exporter-wide histograms every destination's traces feed
// (no destination label: per destination, the last value is a gauge; see
// docs/metrics.md, "Series budget").
type hists struct {
	duration, latency prometheus.Histogram
	// traces counts every destination's traces by result, one series per
	// result: per destination, trace_success and trace_failures_total
	// carry it (docs/metrics.md, "Series budget").
	traces   *prometheus.CounterVec
	byResult [len(allResults)]prometheus.Counter // its series, in allResults' order
}

func newHists() *hists {
	native := func(name, help string, buckets []float64) prometheus.Histogram {
		return prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: namespace, Name: name, Help: help, Buckets: buckets,
			NativeHistogramBucketFactor: 1.1, NativeHistogramMaxBucketNumber: 100,
			NativeHistogramMinResetDuration: time.Hour,
		})
	}
	h := &hists{
		duration: native("trace_duration_seconds", "How long traces took, all destinations together.", durationBuckets),
		latency: native("latency_seconds",
			"Round-trip time of the validation MAD to a destination's own agent (end-to-end latency), all destinations together.", latencyBuckets),
		traces: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "traces_total",
			Help: "Traces of all destinations together, by result."}, []string{"result"}),
	}
	for i, r := range allResults {
		h.byResult[i] = h.traces.WithLabelValues(string(r)) // every result from the first scrape
	}
	return h
}

// destState is one configured destination and what its traces found.
type destState struct {
	cfg    config.Destination
	target trace.Destination
	labels []string // values of the label names, in order: destination, then the config's
	hops   bool     // per-hop and path-detail series (hops: true)
	// atPhase: a discovered destination, first traced at its phase
	// rather than soon after start.
	atPhase bool
	hists   *hists

	// Label pairs of its series (see labels.go): the fixed ones (the
	// per-hop ones are built when a scrape writes them, metrics.go).
	// The failure reasons' are built by the scrape that shows them: kept,
	// they would grow the heap with every kind of failure a destination
	// meets (docs/metrics.md, "Memory").
	base, info labelSet

	sch  schedState    // schedule.go, guarded by scheduler.mu
	done chan struct{} // closed once stopped and no trace of it runs

	mu           sync.Mutex // guards the fields below (not ops, which has its own)
	last         *trace.Result
	lastTime     time.Time
	lastPort     *trace.Hop // the destination hop of the last trace that reached it (destination_last_port_info)
	lastDuration time.Duration
	lastLatency  time.Duration  // of the last trace that measured one
	signature    uint64         // a hash of the last path (of LID offset 0)
	signatures   map[int]uint64 // of the other LID offsets (paths: all)
	set          *trace.PathSet // the last path set (paths: all; paths.go)
	byOffset     map[int]uint64 // path changes per LID offset (paths: all; nil until one)
	pathChanges  uint64
	back         returnMemory // the path before the last change, and the returns to it (returns.go)
	lastChange   time.Time
	mismatched   uint64 // hops mismatched, summed over traces
	unsupported  uint64 // hops without an agent, summed over traces
	mads         uint64
	traces       uint64                   // traces recorded, of every result (/traces)
	failures     *[len(allReasons)]uint64 // in allReasons' order; nil until a failure
	health       *linkhealth.PathHealth   // of the last trace (nil: health off, or no link; health.go)
	left         leftLinks                // links the path left that are down (leftdown.go; nil: none)
	carried      []*trace.Result          // the paths of the state a reload replaced, until the first walk (leftdown.go, carryLeft)

	ops opsState // what the logs and /traces remember (history.go)
}

func newDestState(d config.Destination, labelNames []string, h *hists) *destState {
	values := make([]string, 0, len(labelNames)+1)
	values = append(values, d.Name)
	for _, k := range labelNames {
		values = append(values, d.Labels[k])
	}
	base := newLabelSet(append([]string{destLabel}, labelNames...), values)
	s := &destState{cfg: d, target: d.Target(), labels: values, done: make(chan struct{}), hops: d.HopSeries(), hists: h, base: base}
	addr, args := s.infoAddress()
	s.info = base.with(pair("address", addr), pair("ibtracer_args", args))
	return s
}

// sameAs reports whether a reloaded destination can keep this state.
func (s *destState) sameAs(d config.Destination, labelNames []string) bool {
	if s.cfg.Name != d.Name || s.cfg.Interval != d.Interval || s.target != d.Target() || len(s.labels) != len(labelNames)+1 ||
		s.hops != d.HopSeries() || s.cfg.AllPaths() != d.AllPaths() || s.cfg.MLID != d.MLID {
		return false
	}
	for i, k := range labelNames {
		if s.labels[i+1] != d.Labels[k] {
			return false
		}
	}
	return true
}

// record folds one trace into the state.
func (s *destState) record(r *trace.Result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last, s.lastTime = r, r.Start.Add(r.Duration)
	if (r.Status == trace.StatusOK || r.Status == trace.StatusMismatch) && len(r.Hops) > 0 {
		h := r.Hops[len(r.Hops)-1]
		s.lastPort = &trace.Hop{NodeGUID: h.NodeGUID, PortGUID: h.PortGUID, NodeDesc: h.NodeDesc, NodeName: h.NodeName}
	}
	s.recordLocked(r, 0)
}

// setHealth keeps the path health of the last trace (nil: none).
func (s *destState) setHealth(ph *linkhealth.PathHealth) {
	s.mu.Lock()
	s.health = ph
	s.mu.Unlock()
}

// lastHealth is the path health of the last trace (nil: none).
func (s *destState) lastHealth() *linkhealth.PathHealth {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.health
}

// recordLocked counts one trace, of LID offset off, into the totals.
func (s *destState) recordLocked(r *trace.Result, off int) {
	now := r.Start.Add(r.Duration)
	if i := resultIndex(r.Status); i >= 0 {
		s.traces++
		if s.hists != nil {
			s.hists.byResult[i].Inc()
		}
	}
	if j := reasonIndex(r.Reason); !r.Status.Succeeded() && j >= 0 {
		if s.failures == nil {
			s.failures = new([len(allReasons)]uint64)
		}
		s.failures[j]++
	}
	s.mads += uint64(r.MADs)
	s.lastDuration = r.Duration
	if s.hists != nil {
		s.hists.duration.Observe(r.Duration.Seconds())
	}
	if r.Status.Walked() {
		if sig, prev := signature(r), s.signatureLocked(off); sig != prev {
			if prev != 0 {
				s.pathChanges++
				if s.byOffset == nil {
					s.byOffset = map[int]uint64{}
				}
				s.byOffset[off]++
				s.lastChange = now
				s.back.changed(off, prev, sig)
			}
			s.setSignatureLocked(off, sig)
		}
		s.mismatched += uint64(r.Count(trace.AgentMismatch))
		s.unsupported += uint64(unsupported(r))
		if n := len(r.Hops); n > 1 {
			if h := r.Hops[n-1]; h.AgentAnswered() {
				s.lastLatency = h.AgentRTT
				if s.hists != nil {
					s.hists.latency.Observe(h.AgentRTT.Seconds())
				}
			}
		}
	}
}

// resultIndex is st's place in allResults (-1: none).
func resultIndex(st trace.Status) int {
	for i, v := range allResults {
		if v == st {
			return i
		}
	}
	return -1
}

// reasonIndex is rs's place in allReasons (-1: none).
func reasonIndex(rs trace.Reason) int {
	for i, v := range allReasons {
		if v == rs {
			return i
		}
	}
	return -1
}

// signature is a hash of r's path (trace.Result.Signature): a destination
// keeps 8 bytes per path rather than the text (0: none).
func signature(r *trace.Result) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(r.Signature()))
	if v := h.Sum64(); v != 0 {
		return v
	}
	return 1
}

func (s *destState) signatureLocked(off int) uint64 {
	if off == 0 {
		return s.signature
	}
	return s.signatures[off]
}

func (s *destState) setSignatureLocked(off int, sig uint64) {
	if off == 0 {
		s.signature = sig
		return
	}
	if s.signatures == nil {
		s.signatures = map[int]uint64{}
	}
	s.signatures[off] = sig
}

// unsupported counts the hops of r that nobody validated though someone
// was to be asked: no agent and the SMA not asked (unsupported), or no
// answer (lost). Under auto a hop without an agent is its SMA's, so these
// are the hops neither could judge (docs/metrics.md).
func unsupported(r *trace.Result) int {
	return r.Count(trace.AgentUnsupported) + r.Count(trace.AgentLost)
}

// validatorNone is the validated_by of a hop nobody was asked about.
const validatorNone = "none"

// validator is the validated_by label of who judged a hop: agent, sma or
// none (a bounded set: trace.Validator's values and none).
func validator(v trace.Validator) string {
	if v == "" {
		return validatorNone
	}
	return string(v)
}

// infoAddress is the address and ibtracer arguments of the info series.
func (s *destState) infoAddress() (address, args string) {
	if s.cfg.Multicast() {
		return s.cfg.MulticastAddress()
	}
	return s.target.Address(), s.target.Args()
}

// compact trims what a destination keeps of its last trace (for /traces
// and the logs) until the next one: the hops in a slice of their exact
// length (the walk grows it by appending), their directed routes in one
// array, and their node descriptions and names shared with every other
// destination whose path crosses the same nodes (at 10,000 destinations,
// a few leaves and spines appear in thousands of paths).
func compact(r *trace.Result) {
	if r == nil || len(r.Hops) == 0 {
		return
	}
	hops := make([]trace.Hop, len(r.Hops))
	copy(hops, r.Hops)
	n := 0
	for i := range hops {
		n += len(hops[i].DRPath)
	}
	dr := make(ibmad.DRPath, 0, n)
	for i := range hops {
		h := &hops[i]
		h.NodeDesc = intern(h.NodeDesc)
		h.NodeName = intern(h.NodeName)
		if h.DRPath != nil {
			start := len(dr)
			dr = append(dr, h.DRPath...)
			h.DRPath = dr[start:len(dr):len(dr)]
		}
	}
	r.Hops = hops
}

func intern(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}
