package collector

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibtracer/ibtracer_exporter/localize"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// Link evidence (config evidence:): at every scrape, each destination's
// last trace, previous path and path health become a localize.Path, and
// the paths are summed per link (docs/metrics.md, "Link evidence").
// Nothing is kept between scrapes but what the destinations keep anyway.

var (
	dLinkPaths = desc("link_paths", "Paths (the current and the previous path of each destination) that cross the link.",
		localize.LabelNames...)
	dLinkBadPaths = desc("link_bad_paths", "Paths crossing the link that are bad now and that the link can explain "+
		"(only links with at least one).", localize.LabelNames...)
	dLinkSuspicion = desc("link_suspicion", "This exporter's suspicion of the link: its part of the bad paths' votes "+
		"(each bad path gives one vote, shared among the links that can explain it; only links with a bad path).", localize.LabelNames...)
	dEvidencePaths    = desc("evidence_paths", "Destinations' paths judged for the link evidence (one per destination traced).")
	dEvidenceBadPaths = desc("evidence_bad_paths", "Of those, the paths that are bad now; the link_suspicion of all links sums to it.")
	dEvidenceCauses   = desc("evidence_bad_path_causes", "Bad paths by why they are bad (a path with two causes counts under both).", "cause")
)

// evidenceSettings are the evidence: section's, read under Exporter.mu
// (on false: evidence off, or no configuration yet).
func (e *Exporter) evidenceSettings() (on bool, latency time.Duration) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.cfg == nil || !e.cfg.Evidence.Enabled {
		return false, 0
	}
	return true, time.Duration(e.cfg.Evidence.LatencyThreshold)
}

// evidence is the destination's path evidence now (ok false: never
// traced).
func (s *destState) evidence(latency time.Duration) (p localize.Path, ok bool) {
	s.mu.Lock()
	cur, ph := s.last, s.health
	s.mu.Unlock()
	if cur == nil {
		return localize.Path{}, false
	}
	return localize.FromTrace(localize.Trace{Current: cur, Previous: s.previousPath(cur), Health: ph,
		LatencyThreshold: latency}), true
}

// previousPath is the path before cur (logstate.go keeps both): the last
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

// collectEvidence emits the link evidence (nothing while it is off):
// link_paths for every link a path crosses, link_bad_paths and
// link_suspicion for the links a bad path names.
func (e *Exporter) collectEvidence(ch chan<- prometheus.Metric, dests []*destState) {
	on, latency := e.evidenceSettings()
	if !on {
		return
	}
	var acc localize.Accumulator
	bad, causes := 0, make(map[localize.Cause]int, len(localize.Causes))
	for _, s := range dests {
		p, ok := s.evidence(latency)
		if !ok {
			continue
		}
		if p.Bad {
			bad++
			for _, c := range p.Causes {
				causes[c]++
			}
		}
		acc.Add(p)
	}
	g := func(d *prometheus.Desc, v float64, lv ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, lv...)
	}
	g(dEvidencePaths, float64(acc.Len()))
	g(dEvidenceBadPaths, float64(bad))
	for _, c := range localize.Causes {
		g(dEvidenceCauses, float64(causes[c]), string(c))
	}
	for _, le := range acc.Evidence() {
		lv := le.Link.Labels()
		g(dLinkPaths, float64(le.Paths), lv...)
		if le.BadPaths > 0 {
			g(dLinkBadPaths, float64(le.BadPaths), lv...)
			g(dLinkSuspicion, le.Suspicion, lv...)
		}
	}
}
