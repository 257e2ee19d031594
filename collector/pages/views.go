package pages

import (
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/linkhealth"
	"github.com/ibtracer/ibtracer_exporter/localize"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// Snapshot is what one request reads, taken once when it arrives: the
// destinations sorted by name and the exporter's state. Nothing in it
// changes afterwards; the results it points to are never changed once
// recorded.
type Snapshot struct {
	Destinations []Destination
	// Device says whether the device is open, or why not.
	Device string
	// Evidence is whether the link evidence is on (evidence: enabled),
	// EvidenceLatency its latency threshold.
	Evidence        bool
	EvidenceLatency time.Duration
	// NodeNames is the configuration's node-name-map (nil: none), for the
	// filters' names.
	NodeNames map[uint64]string
}

// Destination is one destination as the pages read it.
type Destination struct {
	Name            string
	Address         string // as in its info series (destination_info)
	Labels          map[string]string
	IntervalSeconds float64
	// Multicast: a destination with mlid:, whose path follows the
	// group's MFTs; the link evidence does not judge it.
	Multicast bool
	// Traces counts its traces of every result; PathChanges its path
	// changes, the last at LastChange (zero: never).
	Traces, PathChanges uint64
	LastChange          time.Time
	// Last is the latest trace (nil: never traced); Health its path
	// health (nil: none).
	Last   *trace.Result
	Health *linkhealth.PathHealth
	// Previous is the path before the latest change (nil: it never
	// changed), last seen at PreviousUntil.
	Previous      *trace.Result
	PreviousUntil time.Time
	// EvidencePrevious is the path the link evidence takes as Last's
	// previous one: the last path that reached the destination when Last
	// did not, else the one before the last change.
	EvidencePrevious *trace.Result
	// LastGood is the last trace that succeeded (nil: none).
	LastGood *trace.Result
}

// TraceView is one destination in /traces.
type TraceView struct {
	Name            string            `json:"name"`
	Address         string            `json:"address"`
	Labels          map[string]string `json:"labels,omitempty"`
	IntervalSeconds float64           `json:"interval_seconds"`
	// Traces is how many traces of the destination were recorded since it
	// was configured (every result; /metrics counts them for all
	// destinations together, docs/metrics.md).
	Traces      uint64            `json:"traces"`
	PathChanges uint64            `json:"path_changes"`
	LastChange  *time.Time        `json:"last_change,omitempty"`
	Last        *trace.JSONResult `json:"last_trace"`
	// PreviousPath is the last trace of the path before the latest change
	// (absent until the path changes), PreviousPathUntil when the change
	// was seen.
	PreviousPath      *trace.JSONResult `json:"previous_path,omitempty"`
	PreviousPathUntil *time.Time        `json:"previous_path_until,omitempty"`
	// Congestion is the last path's most congested link (health:).
	Congestion *PathCongestion `json:"congestion,omitempty"`
	// PathHealth is the last path's health, link by link (health:).
	PathHealth *PathHealthView `json:"path_health,omitempty"`
	// LastGoodPath is, while the latest trace fails (it stopped short,
	// or a hop mismatched), the last trace that succeeded.
	LastGoodPath *trace.JSONResult `json:"last_good_path,omitempty"`
}

// Views returns the latest trace of every destination of snap.
func Views(snap Snapshot) []TraceView {
	var out []TraceView
	for i := range snap.Destinations {
		out = append(out, snap.Destinations[i].view())
	}
	return out
}

func (d *Destination) view() TraceView {
	v := TraceView{Name: d.Name, Address: d.Address, Labels: d.Labels, IntervalSeconds: d.IntervalSeconds, Traces: d.Traces,
		PathChanges: d.PathChanges}
	if !d.LastChange.IsZero() {
		t := d.LastChange.UTC()
		v.LastChange = &t
	}
	if d.Last != nil {
		j := d.Last.JSON()
		v.Last = &j
	}
	if d.Previous != nil {
		j, t := d.Previous.JSON(), d.PreviousUntil.UTC()
		v.PreviousPath, v.PreviousPathUntil = &j, &t
	}
	v.Congestion = pathCongestion(d.Health)
	v.PathHealth = pathHealthView(d.Health)
	if v.PathHealth != nil && d.Last != nil && !d.Last.Status.Walked() {
		v.PathHealth.Partial = true
	}
	if d.Last != nil && !d.Last.Status.Succeeded() && d.LastGood != nil {
		j := d.LastGood.JSON()
		v.LastGoodPath = &j
	}
	return v
}

// paths are the destination's latest trace, the path the evidence takes
// as its previous one and its path before the last change (nil where
// there is none).
func (d *Destination) paths() []*trace.Result {
	if d.Last == nil {
		return nil
	}
	return []*trace.Result{d.Last, d.EvidencePrevious, d.Previous}
}

// crosses says whether d's latest trace, the path the link evidence
// takes as its previous one (the last good path while the destination
// fails), or its path before the last change crosses the link l names
// (trace.Result.Crosses, either end, either direction): /traces?link=
// lists the destinations a suspect link carries now or carried before
// the fabric routed around it, every one whose evidence names it among
// them (docs/runbook.md, "Which destinations cross a link").
func (d *Destination) crosses(l trace.LinkPort) bool {
	for _, r := range d.paths() {
		if r == nil {
			continue
		}
		if _, ok := r.Crosses(l); ok {
			return true
		}
	}
	return false
}

// endsAt says whether one of the destination's paths that reached it
// ends at node g, or at the port whose GUID is g.
func (d *Destination) endsAt(g ibmad.GUID) bool {
	for _, r := range d.paths() {
		if r == nil || !r.Status.Walked() || len(r.Hops) == 0 {
			continue
		}
		if last := &r.Hops[len(r.Hops)-1]; last.NodeGUID == g || last.PortGUID == g {
			return true
		}
	}
	return false
}

// evidence is the destination's path evidence (ok false: never traced,
// or a multicast destination: its path follows the group's MFTs and its
// failures are membership matters, not links; docs/metrics.md, "Link
// evidence"), as the scrape judges it.
func (d *Destination) evidence(latency time.Duration) (localize.Path, bool) {
	if d.Multicast || d.Last == nil {
		return localize.Path{}, false
	}
	return localize.FromTrace(localize.Trace{Current: d.Last, Previous: d.EvidencePrevious, Health: d.Health,
		LatencyThreshold: latency}), true
}
