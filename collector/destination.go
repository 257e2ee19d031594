package collector

import (
	"hash/fnv"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibtracer/ibtracer_exporter/collector/config"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// Histogram buckets: traces take milliseconds to seconds; an agent's
// round trip takes microseconds to milliseconds.
var (
	durationBuckets = []float64{.001, .005, .025, .1, .5, 2.5, 10}
	latencyBuckets  = []float64{.00001, .00005, .0001, .0005, .001, .005, .025, .1}
)

// destState is one configured destination and what its traces found.
type destState struct {
	cfg    config.Destination
	target trace.Destination
	labels []string // values of the label names, in order: destination, then the config's

	// Label pairs of its series (see labels.go): fixed ones, and the
	// per-hop ones of the last trace (nil: build them at the next scrape).
	base, info         labelSet
	byResult, byReason []labelSet
	hopSets            []hopLabels

	cancel func()
	done   chan struct{}

	mu          sync.Mutex
	last        *trace.Result
	lastTime    time.Time
	signatures  map[int]string // the last path of each LID offset (0 unless paths: all)
	set         *trace.PathSet // the last path set (paths: all; paths.go)
	byOffset    map[int]uint64 // path changes per LID offset (paths: all)
	pathChanges uint64
	lastChange  time.Time
	mismatched  uint64 // hops mismatched, summed over traces
	unsupported uint64 // hops without an agent, summed over traces
	mads        uint64
	results     map[trace.Status]uint64
	failures    map[trace.Reason]uint64
	duration    prometheus.Histogram
	latency     prometheus.Histogram

	ops opsState // what the logs and /traces remember (logstate.go)
}

func newDestState(d config.Destination, labelNames []string) *destState {
	values := make([]string, 0, len(labelNames)+1)
	values = append(values, d.Name)
	const0 := prometheus.Labels{"destination": d.Name}
	for _, k := range labelNames {
		values = append(values, d.Labels[k])
		const0[k] = d.Labels[k]
	}
	native := func(name, help string, buckets []float64) prometheus.Histogram {
		return prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: namespace, Name: name, Help: help, Buckets: buckets, ConstLabels: const0,
			NativeHistogramBucketFactor: 1.1, NativeHistogramMaxBucketNumber: 100,
			NativeHistogramMinResetDuration: time.Hour,
		})
	}
	base := newLabelSet(append([]string{"destination"}, labelNames...), values)
	byResult := make([]labelSet, len(allResults))
	for i, r := range allResults {
		byResult[i] = base.with(pair("result", string(r)))
	}
	byReason := make([]labelSet, len(allReasons))
	for i, r := range allReasons {
		byReason[i] = base.with(pair("reason", string(r)))
	}
	target := d.Target()
	return &destState{cfg: d, target: target, labels: values, done: make(chan struct{}),
		base: base, info: base.with(pair("address", target.Address()), pair("ibtracer_args", target.Args())),
		byResult: byResult, byReason: byReason,
		results: map[trace.Status]uint64{}, failures: map[trace.Reason]uint64{},
		signatures: map[int]string{}, byOffset: map[int]uint64{},
		duration: native("trace_duration_seconds", "How long traces to the destination took.", durationBuckets),
		latency: native("latency_seconds",
			"Round-trip time of the validation MAD to the destination's own agent (end-to-end latency).", latencyBuckets),
	}
}

// sameAs reports whether a reloaded destination can keep this state.
func (s *destState) sameAs(d config.Destination, labelNames []string) bool {
	if s.cfg.Name != d.Name || s.cfg.Interval != d.Interval || s.target != d.Target() || len(s.labels) != len(labelNames)+1 ||
		s.cfg.AllPaths() != d.AllPaths() {
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
	s.hopSets = nil
	s.recordLocked(r, 0)
}

// recordLocked counts one trace, of LID offset off, into the totals.
func (s *destState) recordLocked(r *trace.Result, off int) {
	now := r.Start.Add(r.Duration)
	s.results[r.Status]++
	if r.Status != trace.StatusOK && r.Reason != trace.ReasonNone {
		s.failures[r.Reason]++
	}
	s.mads += uint64(r.MADs)
	s.duration.Observe(r.Duration.Seconds())
	if r.Status == trace.StatusOK || r.Status == trace.StatusMismatch {
		if sig, prev := r.Signature(), s.signatures[off]; sig != prev {
			if prev != "" {
				s.pathChanges++
				s.byOffset[off]++
				s.lastChange = now
			}
			s.signatures[off] = sig
		}
		s.mismatched += uint64(r.Count(trace.AgentMismatch))
		s.unsupported += uint64(unsupported(r))
		if n := len(r.Hops); n > 1 {
			if h := r.Hops[n-1]; h.Agent == trace.AgentValidated || h.Agent == trace.AgentMismatch || h.Agent == trace.AgentIngressUnknown {
				s.latency.Observe(h.AgentRTT.Seconds())
			}
		}
	}
}

func unsupported(r *trace.Result) int {
	return r.Count(trace.AgentUnsupported) + r.Count(trace.AgentLost)
}

// phase is the destination's deterministic offset within its interval:
// a hash of the exporter's identity (its port GUID) and the destination,
// so that a fabric of exporters spreads its traces over the interval.
func phase(seed, name string, interval time.Duration) time.Duration {
	h := fnv.New64a()
	_, _ = h.Write([]byte(seed))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(name))
	if interval <= 0 {
		return 0
	}
	return time.Duration(h.Sum64() % uint64(interval))
}

// nextRun returns the first time after now that sits at phase within the
// interval grid anchored at the Unix epoch.
func nextRun(now time.Time, interval, ph time.Duration) time.Time {
	base := now.Truncate(interval).Add(ph)
	for !base.After(now) {
		base = base.Add(interval)
	}
	return base
}

// hopLabels are the label sets of one hop's series.
type hopLabels struct {
	info, status, rtt labelSet
	rttSeconds        float64
}

// hopLabelsLocked returns the label sets of the last trace's hops (none
// unless it reached the destination), building them once per trace; with
// paths: all, the hops of every path of the set (paths.go).
func (s *destState) hopLabelsLocked() []hopLabels {
	if s.set != nil {
		return s.setHopLabelsLocked()
	}
	r := s.last
	if s.hopSets != nil || r == nil || len(r.Hops) < 2 || (r.Status != trace.StatusOK && r.Status != trace.StatusMismatch) {
		return s.hopSets
	}
	s.hopSets = appendHopLabels(make([]hopLabels, 0, len(r.Hops)-1), s.base, r)
	return s.hopSets
}

// appendHopLabels appends the label sets of r's hops, base labels first.
func appendHopLabels(out []hopLabels, base labelSet, r *trace.Result) []hopLabels {
	for _, h := range r.Hops[1:] {
		hop := pair("hop", strconv.Itoa(h.Hop))
		rtt := h.RTT
		if h.AgentRTT > 0 {
			rtt = h.AgentRTT
		}
		out = append(out, hopLabels{
			info: base.with(hop, pair("node_guid", h.NodeGUID.String()), pair("port_guid", h.PortGUID.String()),
				pair("node_desc", h.NodeDesc), pair("node_type", h.NodeType.String()), pair("lid", strconv.Itoa(int(h.LID))),
				pair("in_port", strconv.Itoa(int(h.InPort))), pair("out_port", strconv.Itoa(int(h.OutPort)))),
			status:     base.with(hop, pair("status", string(h.Agent))),
			rtt:        base.with(hop),
			rttSeconds: rtt.Seconds(),
		})
	}
	return out
}
