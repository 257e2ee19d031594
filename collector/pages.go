package collector

import (
	"net/http"

	"github.com/ibtracer/ibtracer_exporter/collector/pages"
)

// The pages (package pages) read a snapshot of the destinations, taken
// once per request.

// TracesHandler serves /traces (pages.Traces): the latest trace of
// every destination, or of those the query names, as JSON or HTML.
func (e *Exporter) TracesHandler() http.Handler { return pages.Traces(e.snapshot) }

// LandingHandler serves the landing page at / (pages.LandingPage): what
// the exporter is, links to its pages, the destinations' status, the
// suspected links and the unhealthy links.
func (e *Exporter) LandingHandler(l pages.Landing) http.Handler {
	return pages.LandingPage(e.snapshot, l)
}

// Traces returns the latest trace of every destination.
func (e *Exporter) Traces() []pages.TraceView { return pages.Views(e.snapshot()) }

// snapshot is what the pages read of the exporter now.
func (e *Exporter) snapshot() pages.Snapshot {
	rt := e.st.load()
	on, latency, _ := rt.evidence()
	snap := pages.Snapshot{Device: rt.deviceStatus(), Evidence: on, EvidenceLatency: latency, NodeNames: rt.nodeNames()}
	dests := e.dests.sorted()
	snap.Destinations = make([]pages.Destination, len(dests))
	for i, s := range dests {
		snap.Destinations[i] = s.snapshot()
	}
	return snap
}

// snapshot is the destination as the pages read it.
func (s *destState) snapshot() pages.Destination {
	prev, until := s.previous()
	good := s.lastGood()
	s.mu.Lock()
	d := pages.Destination{Name: s.cfg.Name, Labels: s.cfg.Labels, IntervalSeconds: durationSeconds(s.cfg.Interval),
		Multicast: s.cfg.Multicast(), Traces: s.traces, PathChanges: s.pathChanges, LastChange: s.lastChange,
		Last: s.last, Health: s.health, Previous: prev, PreviousUntil: until, LastGood: good}
	d.Address, _ = s.infoAddress() // multicast.go
	s.mu.Unlock()
	if d.Last != nil {
		d.EvidencePrevious = s.previousPath(d.Last) // evidence.go
	}
	return d
}
