package collector

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/ibtracer/ibtracer_exporter/collector/pages"
	"github.com/ibtracer/ibtracer_exporter/internal/logonce"
	"github.com/ibtracer/ibtracer_exporter/localize"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// opsState is what a destination's logs and /traces remember across
// traces: the state the logs last reported (so that a failing destination
// logs when its state changes, not on every trace), and the path before
// the latest one (so that a path change can be read after the fact).
type opsState struct {
	mu      sync.Mutex            // guards the fields below
	state   logonce.State[string] // "ok", or the failing status[/reason]; since when, traces since
	offPath logonce.State[string] // the mismatches a successful trace saw over other links than its path's ("": none)
	path    *trace.Result
	prev    *trace.Result // the path before path, nil until it changes
	prevEnd time.Time     // when prev was last seen (the change's time)
	good    *trace.Result // the last trace that succeeded (the pages' last good path)
}

// traceState names a trace's outcome for the logs: "ok", or the status
// and reason of a failed trace. A mismatch reached the destination but
// disagrees with the forwarding tables: it counts as failing.
func traceState(r *trace.Result) string {
	if r.Status.Succeeded() { // ok, or left the subnet
		return "ok"
	}
	if r.Reason == trace.ReasonNone {
		return string(r.Status)
	}
	return string(r.Status) + "/" + string(r.Reason)
}

// reached says whether r walked the whole path (its hops are the path).
func reached(r *trace.Result) bool {
	return r.Status.Walked()
}

// opsEvent is one log line observe decided on.
type opsEvent struct {
	warn bool
	kv   []any
}

// observe folds r into the destination's ops state and returns the lines
// to log: one when the state changes (ok → failing, one failure → another,
// failing → ok) and one when the path changes, with both paths.
func (s *destState) observe(r *trace.Result, set ...*trace.Result) []opsEvent {
	o := &s.ops
	o.mu.Lock()
	defer o.mu.Unlock()
	now := r.Start.Add(r.Duration)
	name := s.cfg.Name
	var out []opsEvent
	st := traceState(r)
	// A healthy start says nothing.
	if c, changed := o.state.Observe(st, now); changed && (c.Known || st != "ok") {
		kv := []any{"destination", name, "address", s.target.Address(), "state", st, "previous_state", c.From}
		if !c.Known {
			kv[len(kv)-1] = "unknown"
		}
		if !c.Since.IsZero() {
			kv = append(kv, "previous_for", now.Sub(c.Since).Round(time.Millisecond))
		}
		switch {
		case st == "ok":
			kv = append([]any{"msg", "destination recovered"}, append(kv, "failed_traces", c.Count)...)
		case c.From == "ok" || !c.Known:
			kv = append([]any{"msg", "destination failing"}, append(append(kv, "status", r.Status, "reason", r.Reason), divergedKV(r, "err", r.Err)...)...)
		default:
			kv = append([]any{"msg", "destination failure changed"}, append(append(kv, "status", r.Status, "reason", r.Reason), divergedKV(r, "err", r.Err)...)...)
		}
		out = append(out, opsEvent{warn: st != "ok", kv: kv})
	}
	if st == "ok" {
		o.good = r
		if len(set) == 0 {
			set = []*trace.Result{r}
		}
		if ev, ok := o.offPathEvent(set, name, now); ok {
			out = append(out, ev)
		}
	}
	if reached(r) {
		if o.path != nil && o.path.Signature() != r.Signature() {
			o.prev, o.prevEnd = o.path, now
			out = append(out, opsEvent{kv: []any{"msg", "path changed", "destination", name,
				"old_hops", o.prev.PathHops(), "new_hops", r.PathHops(),
				"old_path", pathString(o.prev), "new_path", pathString(r)}})
		}
		o.path = r
	}
	return out
}

// offPathEvent is the line to log when the mismatches the validation of
// a destination's traces (one, or a LID's each with paths: all) saw over
// other links than their paths' (mismatch_other_link: a divergence off
// this destination's path, trace.AgentMismatchOtherLink) begin, change or
// end: the diverging switch by name with its GUID, and the hop where it
// was seen. o.mu is held.
func (o *opsState) offPathEvent(set []*trace.Result, name string, now time.Time) (opsEvent, bool) {
	var seen, named []string
	var kv []any
	for _, r := range set {
		for i := range r.Hops {
			if h := &r.Hops[i]; h.Agent == trace.AgentMismatchOtherLink {
				if s := fmt.Sprintf("hop %d %s", h.Hop, nodeName(h.NodeName, h.NodeDesc)); !slices.Contains(seen, s) {
					seen = append(seen, s)
				}
			}
		}
		for j, p := 0, divergedKV(r); j+4 <= len(p); j += 4 { // diverging_switch, seen_at pairs
			if !slices.Contains(named, fmt.Sprint(p[j+1], p[j+3])) {
				named = append(named, fmt.Sprint(p[j+1], p[j+3]))
				kv = append(kv, p[j:j+4]...)
			}
		}
	}
	key := strings.Join(seen, "; ")
	c, changed := o.offPath.Observe(key, now)
	if !changed || (!c.Known && key == "") {
		return opsEvent{}, false
	}
	if key == "" {
		return opsEvent{kv: []any{"msg", "divergence off the path cleared", "destination", name, "traces", c.Count}}, true
	}
	return opsEvent{warn: true, kv: append([]any{"msg", "divergence off the path", "destination", name, "seen_at_hops", key}, kv...)}, true
}

// lastGood returns the last trace that succeeded (nil: none yet).
func (s *destState) lastGood() *trace.Result {
	s.ops.mu.Lock()
	defer s.ops.mu.Unlock()
	return s.ops.good
}

// previous returns the path before the latest one and when it was last
// seen (nil when the path never changed).
func (s *destState) previous() (*trace.Result, time.Time) {
	s.ops.mu.Lock()
	defer s.ops.mu.Unlock()
	return s.ops.prev, s.ops.prevEnd
}

// pathString writes a path hop by hop for the logs: each node by name
// with its GUID after (trace.NodeLabel) and its ingress and egress ports,
// "NAME {GUID}[in>out]", joined by " -> ".
func pathString(r *trace.Result) string {
	var b strings.Builder
	for i := range r.Hops {
		h := &r.Hops[i]
		if i > 0 {
			b.WriteString(" -> ")
		}
		fmt.Fprintf(&b, "%s[%d>%d]", h.Label(), h.InPort, h.OutPort)
	}
	return b.String()
}

// logEvents logs what observe found.
func logEvents(logger log.Logger, evs []opsEvent) {
	for _, ev := range evs {
		if ev.warn {
			level.Warn(logger).Log(ev.kv...)
		} else {
			level.Info(logger).Log(ev.kv...)
		}
	}
}

// divergedKV is kv followed, for a mismatch that names them, by the
// diverging switches and where each was seen: diverging_switch "L0
// (0x...)", seen_at "hop 2 S1" (trace.Divergence), one pair each.
func divergedKV(r *trace.Result, kv ...any) []any {
	if !r.Status.Walked() {
		return kv // a success names one off the path (offPathEvent)
	}
	for i := range r.Hops {
		if h := &r.Hops[i]; h.Diverged != nil {
			kv = append(kv, "diverging_switch", fmt.Sprintf("%s (%s)", h.Diverged.SwitchName, h.Diverged.Switch),
				"seen_at", fmt.Sprintf("hop %d %s", h.Hop, nodeName(h.NodeName, h.NodeDesc)))
		}
	}
	return kv
}

// evidence is the destination's path evidence now (ok false: never
// traced, or a multicast destination: its path follows the group's MFTs
// and its failures are membership matters, not links; localize.FromTrace
// says why, and docs/metrics.md, "Link evidence").
func (s *destState) evidence(latency time.Duration) (p localize.Path, ok bool) {
	if s.cfg.Multicast() {
		return localize.Path{}, false
	}
	s.mu.Lock()
	cur, ph := s.last, s.health
	s.mu.Unlock()
	if cur == nil {
		return localize.Path{}, false
	}
	return localize.FromTrace(localize.Trace{Current: cur, Previous: s.previousPath(cur), Health: ph,
		LatencyThreshold: latency}), true
}

// previousPath is the path before cur (history.go keeps both): the last
// one that reached the destination when cur did not, else the one before
// the last change. A scrape between a trace's record and its observe
// sees the logs' path one trace behind: that path is then the previous.
func (s *destState) previousPath(cur *trace.Result) *trace.Result {
	s.ops.mu.Lock()
	defer s.ops.mu.Unlock()
	if !reached(cur) || (s.ops.path != nil && s.ops.path != cur) {
		return s.ops.path
	}
	return s.ops.prev
}

// snapshot is the destination as the pages read it.
func (s *destState) snapshot() pages.Destination {
	prev, until := s.previous()
	good := s.lastGood()
	s.mu.Lock()
	d := pages.Destination{Name: s.cfg.Name, Labels: s.cfg.Labels, IntervalSeconds: durationSeconds(s.cfg.Interval),
		Multicast: s.cfg.Multicast(), Traces: s.traces, PathChanges: s.pathChanges, LastChange: s.lastChange,
		Last: s.last, Health: s.health, Previous: prev, PreviousUntil: until, LastGood: good}
	d.Address, _ = s.infoAddress()
	s.mu.Unlock()
	if d.Last != nil {
		d.EvidencePrevious = s.previousPath(d.Last)
	}
	return d
}
