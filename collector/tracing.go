package collector

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/go-kit/log/level"

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
		e.traceSet(tctx, ctx, tr, s, names) // paths.go
		cancel()
		return
	}
	r, ph := traceTarget(tctx, tr, hc, s) // multicast.go
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
	// State changes and path changes are logged once (logstate.go); each
	// trace only at debug.
	logEvents(e.logger, s.observe(r))
	e.recordHealth(s, ph)
	if !r.Status.Succeeded() {
		level.Debug(e.logger).Log("msg", "trace failed", "destination", s.cfg.Name, "address", s.target.Address(),
			"status", r.Status, "reason", r.Reason, "err", r.Err)
	} else {
		level.Debug(e.logger).Log("msg", "traced", "destination", s.cfg.Name, "hops", r.PathHops(), "mads", r.MADs,
			"duration", r.Duration, "fast_path", r.FastPath)
	}
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
