package collector

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/go-kit/log/level"

	"github.com/ibtracer/ibtracer_exporter/internal/nodenamemap"
	"github.com/ibtracer/ibtracer_exporter/linkhealth"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// traceOnce traces s once (the scheduler's run): the trace, its path
// health, and what they found folded into s, the exporter-wide counters
// and the logs.
func (e *Exporter) traceOnce(ctx context.Context, s *destState, interval time.Duration) {
	rt := e.st.load()
	tr, names, hc := rt.tracer, rt.Config.NodeNames, rt.checker
	if tr == nil {
		e.skips.add(skipDeviceDown) // not the destination's failure (docs/architecture.md, "The life of the device")
		return
	}
	tctx, cancel := context.WithTimeout(ctx, interval)
	if s.cfg.AllPaths() {
		lp, ok := e.traceSet(tctx, ctx, tr, s, names)
		cancel()
		if ok { // the links every LID's path left (leftdown.go)
			lctx, cancel := context.WithTimeout(ctx, interval)
			checkLeft(lctx, ctx, tr, s, lp, e.clock.Now(), e.logger, &e.leftForgot)
			cancel()
		}
		return
	}
	r, ph := traceTarget(tctx, tr, hc, s)
	cancel()
	if ctx.Err() != nil {
		return // stopped (reload or shutdown): do not record a cancelled trace
	}
	if r.Status == trace.StatusDevice {
		// The local device failed (a send error, the port gone): a fact
		// about this node, not about the destination.
		e.skips.add(skipDeviceError)
		level.Warn(e.logger).Log("msg", "trace skipped: device error", "destination", s.cfg.Name, "err", r.Err)
		return
	}
	if names != nil { // node_name_map: the result owns its hops, and the health its link ends
		trace.NameHops(names.Name, r)
		ph.NameEnds(names.Name)
	}
	compact(r)
	s.record(r)
	e.modes.add(r)
	// State changes and path changes are logged once (history.go); each
	// trace only at debug.
	logEvents(e.logger, s.observe(r))
	if !s.cfg.Multicast() { // the links a changed path left that are down (leftdown.go)
		lctx, cancel := context.WithTimeout(ctx, interval)
		checkLeft(lctx, ctx, tr, s, singleLeft(s, r), e.clock.Now(), e.logger, &e.leftForgot)
		cancel()
	}
	// The path health is kept, what it spent counted, and the links whose
	// counters became unavailable or available again logged, in the
	// order observed (health_log.go).
	s.setHealth(ph)
	if ph != nil {
		e.health.add(ph)
		e.ctrs.observeAndLog(e.logger, ph)
	}
	if !r.Status.Succeeded() {
		level.Debug(e.logger).Log("msg", "trace failed", "destination", s.cfg.Name, "address", s.target.Address(),
			"status", r.Status, "reason", r.Reason, "err", r.Err)
	} else {
		level.Debug(e.logger).Log("msg", "traced", "destination", s.cfg.Name, "hops", r.PathHops(), "mads", r.MADs,
			"duration", r.Duration, "fast_path", r.FastPath)
	}
}

// traceSet is traceOnce for paths: all: every LID of the port, recorded
// as one set. A device error in any of its traces skips the whole set.
// It returns the set's paths and those before for the links they left
// (leftdown.go; false: nothing recorded).
func (e *Exporter) traceSet(tctx, ctx context.Context, tr *trace.Tracer, s *destState, names nodenamemap.Map) (leftPaths, bool) {
	ps := tr.TraceAll(tctx, s.target)
	if ctx.Err() != nil {
		return leftPaths{}, false // stopped (reload or shutdown)
	}
	for _, r := range ps.Paths {
		if r.Status == trace.StatusDevice {
			e.skips.add(skipDeviceError)
			level.Warn(e.logger).Log("msg", "trace skipped: device error", "destination", s.cfg.Name, "err", r.Err)
			return leftPaths{}, false
		}
	}
	if names != nil {
		trace.NameHops(names.Name, ps.Paths...)
		ps.Summarise()
	}
	before := lastPaths(s)
	s.recordSet(ps)
	for _, r := range ps.Paths {
		e.modes.add(r)
	}
	// The set's state is its worst trace's (the base LID's while all are
	// healthy), logged once per change (history.go).
	// A divergence off the path is any LID's (history.go, offPathEvent).
	worst := ps.Worst()
	logEvents(e.logger, s.observe(worst, ps.Paths...))
	level.Debug(e.logger).Log("msg", "traced every LID", "destination", s.cfg.Name, "lids", len(ps.Paths),
		"distinct_paths", ps.Distinct, "mads", ps.MADs(), "duration", ps.Duration())
	return setLeft(before, ps), true
}

// traceTarget is one trace of s and its path health: the unicast trace,
// or for a multicast destination (mlid:) the path over the group's MFTs
// from this node to the member (trace.TraceMulticast). A multicast trace
// sends no validation MAD (its hops are not_asked, with
// trace.MulticastNote) and gets no path health: the link health reads
// follow the unicast path's ends, and the exporter reports the multicast
// path's hops, status and changes only (docs/metrics.md).
func traceTarget(ctx context.Context, tr *trace.Tracer, hc *linkhealth.Checker, s *destState) (*trace.Result, *linkhealth.PathHealth) {
	if s.cfg.Multicast() {
		r := tr.TraceMulticast(ctx, s.cfg.MLID, 0, s.target.LID)
		r.Destination = s.target // its name
		return r, nil
	}
	r := tr.Trace(ctx, s.target)
	return r, checkHealth(ctx, hc, r)
}

// Reasons a scheduled trace is skipped: they count in
// ibtracer_traces_skipped_total, never against a destination.
const (
	skipDeviceDown  = "device_down"  // no device open (not yet, or lost)
	skipDeviceError = "device_error" // the device failed during the trace
)

var skipReasons = [...]string{skipDeviceDown, skipDeviceError}

// skipCounts count the skipped traces, in skipReasons' order.
type skipCounts [len(skipReasons)]atomic.Uint64

func (k *skipCounts) add(reason string) {
	for i, r := range skipReasons {
		if r == reason {
			k[i].Add(1)
		}
	}
}
