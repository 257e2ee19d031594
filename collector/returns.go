package collector

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// helpReturns is the help of ibtracer_path_returns_total (docs/metrics.md,
// "Path changes").
const helpReturns = "Times the traced path changed back to the path it had before its previous change " +
	"(a return; also counted in path_changes_total)."

// returnMemory remembers, per LID offset, the path before the last change
// (its signature; 0 after a return or before any change) and counts the
// returns: a change back to it. One word per offset: a return undoes the
// change just before it, nothing older (docs/metrics.md, "Path changes").
type returnMemory struct {
	before  map[int]uint64 // nil until a change
	returns map[int]uint64 // nil until a return
}

// changed notes a change of offset off's path from prev to sig and
// says whether it is a return; a return counts as a change too.
func (m *returnMemory) changed(off int, prev, sig uint64) bool {
	if m.before == nil {
		m.before = map[int]uint64{}
	}
	if b := m.before[off]; b != 0 && b == sig {
		if m.returns == nil {
			m.returns = map[int]uint64{}
		}
		m.returns[off]++
		m.before[off] = 0 // the next change away is a change again
		return true
	}
	m.before[off] = prev
	return false
}

// collectReturnsLocked emits path_returns_total with path_changes_total's
// labels, once the path changed (at 0 until a return): a series per
// destination, per LID offset with paths: all, whose path changed, so
// the series follow the faults (docs/metrics.md, "Series budget"). A
// return follows a change, so the series is there before its first one.
func (s *destState) collectReturnsLocked(ch chan<- prometheus.Metric, d, dOff *prometheus.Desc) {
	if s.pathChanges == 0 {
		return
	}
	if !s.cfg.AllPaths() {
		ch <- &sample{desc: d, labels: s.base, typ: prometheus.CounterValue, val: float64(s.back.returns[0])}
		return
	}
	offs := s.offsetsLocked()
	out := make([]sample, 0, len(offs))
	for _, off := range offs {
		if s.byOffset[off] == 0 {
			continue
		}
		out = append(out, sample{desc: dOff, labels: s.base.with(pair("lid_offset", strconv.Itoa(off))), typ: prometheus.CounterValue,
			val: float64(s.back.returns[off])})
		ch <- &out[len(out)-1]
	}
}
