package collector

import (
	"maps"
	"slices"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibtracer/ibtracer_exporter/trace"
)

// A destination with paths: all traces every LID of its port's LMC range
// (trace.TraceAll). Every LID's trace counts as a trace (traces_total,
// MADs, durations); the destination's last result, which trace_success
// and the per-trace gauges show, is the set's worst; a path change is
// counted per LID offset (one LID's path against its own previous one);
// and its hop series carry a lid_offset label. Other destinations' series
// have no lid_offset label: the label exists only where it varies.

// recordSet folds a path set into the state.
func (s *destState) recordSet(ps *trace.PathSet) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, r := range ps.Paths {
		s.recordLocked(r, ps.Offset(i))
		if end := r.Start.Add(r.Duration); end.After(s.lastTime) {
			s.lastTime = end
		}
	}
	s.last, s.set = ps.Worst(), ps
}

// divergedLocked is the hops of the last trace that name a diverging
// switch (a port mismatch, on the path or off it: a success may name one
// too, mismatch_other_link), with paths: all those of every LID's trace,
// one per switch, hop and node.
func (s *destState) divergedLocked() []*trace.Hop {
	set := []*trace.Result{s.last}
	if s.set != nil && s.set.Worst() == s.last {
		set = s.set.Paths
	}
	type key struct {
		sw   trace.Divergence
		hop  int
		node string
	}
	seen := map[key]bool{}
	var out []*trace.Hop
	for _, r := range set {
		if r == nil || !r.Status.Walked() {
			continue
		}
		for i := range r.Hops {
			if h := &r.Hops[i]; h.Diverged != nil {
				k := key{trace.Divergence{Switch: h.Diverged.Switch, SwitchName: h.Diverged.SwitchName}, h.Hop, nodeName(h.NodeName, h.NodeDesc)}
				if !seen[k] {
					seen[k] = true
					out = append(out, h)
				}
			}
		}
	}
	return out
}

// distinctLocked is ibtracer_path_distinct_routes: the distinct paths of
// the last set, or 1 when the last single trace reached the destination.
func (s *destState) distinctLocked() float64 {
	if s.set != nil {
		return float64(s.set.Distinct)
	}
	if r := s.last; r != nil && len(r.Hops) > 1 && r.Status.Walked() {
		return 1
	}
	return 0
}

// offsetsLocked lists the LID offsets with a path-change series: those of
// the last set and any that changed before, at least offset 0.
func (s *destState) offsetsLocked() []int {
	seen := map[int]bool{0: true}
	if s.set != nil {
		for i := range s.set.Paths {
			seen[s.set.Offset(i)] = true
		}
	}
	for off := range s.byOffset {
		seen[off] = true
	}
	return slices.Sorted(maps.Keys(seen))
}

// pathDescs are the descriptors of the per-path series: the lid_offset
// variants, which must keep the help of the plain ones (one metric family).
type pathDescs struct {
	distinct, changes, returns, hopInfo, hopStatus, hopRTT *prometheus.Desc
}

const (
	helpChanges   = "Times the traced path (nodes and ports) changed."
	helpHopInfo   = "The last traced path, one series per hop."
	helpHopStatus = "The verdict on each hop of the last trace and who gave it (validated_by: agent, sma, none): one series per hop."
	helpHopRTT    = "Round-trip time of the last MAD to each hop: the validator's answer (validated_by agent or sma), " +
		"else the walk's directed-route SMP (none)."
)

func newPathDescs(lab func(...string) []string) pathDescs {
	return pathDescs{
		distinct: desc("path_distinct_routes", "Distinct paths to the destination port in the last trace: with paths: all, "+
			"among the LIDs of its LMC range; otherwise 1 when the last trace reached it, 0 when not.", lab()...),
		changes: desc("path_changes_total", helpChanges, lab("lid_offset")...),
		returns: desc("path_returns_total", helpReturns, lab("lid_offset")...),
		hopInfo: desc("hop_info", helpHopInfo,
			lab("hop", "node_guid", "port_guid", "node_desc", "node_type", "lid", "in_port", "out_port", "lid_offset")...),
		hopStatus: desc("hop_verdict", helpHopStatus, lab("hop", "verdict", "validated_by", "lid_offset")...),
		hopRTT:    desc("hop_rtt_seconds", helpHopRTT, lab("hop", "validated_by", "lid_offset")...),
	}
}

// collectOffsetChangesLocked emits path_changes_total per LID offset.
func (s *destState) collectOffsetChangesLocked(ch chan<- prometheus.Metric, d *prometheus.Desc) {
	offs := s.offsetsLocked()
	out := make([]sample, len(offs))
	for i, off := range offs {
		out[i] = sample{desc: d, labels: s.base.with(pair("lid_offset", strconv.Itoa(off))), typ: prometheus.CounterValue,
			val: float64(s.byOffset[off])}
		ch <- &out[i]
	}
}
