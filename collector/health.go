package collector

import (
	"context"
	"sort"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibtracer/ibtracer_exporter/collector/config"
	"github.com/ibtracer/ibtracer_exporter/linkhealth"
	"github.com/ibtracer/ibtracer_exporter/localize"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// Path health (config health:): each destination keeps the PathHealth
// of its last trace (destState.health); per-link series are built from
// the union of the destinations' last paths, once per link however many
// destinations cross it (docs/metrics.md, "Link health").

// healthTotals count what the path health spent, over every destination.
type healthTotals struct {
	mu     sync.Mutex // guards mads and checks
	mads   uint64
	checks uint64
}

func (h *healthTotals) add(ph *linkhealth.PathHealth) {
	h.mu.Lock()
	h.mads += uint64(ph.MADs)
	h.checks++
	h.mu.Unlock()
}

func (h *healthTotals) read() (mads, checks uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.mads, h.checks
}

// newChecker is a new tracer's health checker (nil: health off), with
// the options of config.HealthOptions: reads shared for one interval, and
// a baseline at most 3 of the longest interval old.
func newChecker(tr *trace.Tracer, c *config.Config) *linkhealth.Checker {
	if !c.Health.Enabled {
		return nil
	}
	return linkhealth.NewChecker(tr, c.HealthOptions())
}

// checkHealth reads the health of r's path (nil: health off, or no link).
func checkHealth(ctx context.Context, hc *linkhealth.Checker, r *trace.Result) *linkhealth.PathHealth {
	if hc == nil || len(r.Hops) < 2 {
		return nil
	}
	return hc.Check(ctx, r)
}

var (
	linkLabels  = localize.LabelNames
	dLinkHealth = desc("link_healthy", "1 if the link (on a traced path) is active, at the width and speed both ends support and "+
		"any expected ones, and no error counter rose above its limit in the last interval.", linkLabels...)
	dLinkStatus = desc("link_status", "The link's verdict: one series per link, labelled with it "+
		"(ok, not_active, below_expected, width_degraded, speed_degraded, congested, unknown).", append(linkLabels, "verdict")...)
	dLinkWidth   = desc("link_width_lanes", "Active width of the link (lanes).", linkLabels...)
	dLinkRate    = desc("link_rate_bytes_per_second", "Active data rate of the link: width × lane rate, in bytes per second (bits / 8).", linkLabels...)
	dLinkCapable = desc("link_capable_rate_bytes_per_second", "Data rate of the widest and fastest width and speed both ends support (iblinkinfo's \"Could be\"), in bytes per second.", linkLabels...)
	dLinkMTU     = desc("link_mtu_bytes", "NeighborMTU of the link (the smaller of its ends').", linkLabels...)
	dLinkErrors  = desc("link_errors", "Error counter increments at both ends of the link in the last interval (PortXmitWait excluded; 0 when unknown, see link_counters_state).", linkLabels...)
	dLinkWait    = desc("link_xmit_wait", "PortXmitWait increments at both ends of the link in the last interval (congestion).", linkLabels...)
	dLinkCtr     = desc("link_counters_state", "State of the link's last counter readings, the worse end's: one series per link, labelled "+
		"(ok, first, saturated, reset, unavailable, off).", append(linkLabels, "state")...)
	dHealthMADs   = desc("health_mads_total", "MADs the path health spent (PortInfo, PerfMgt).")
	dHealthChecks = desc("health_checks_total", "Path health checks (one per trace with health on).")
)

// counterRank orders counter states, worst last.
var counterRank = map[string]int{linkhealth.CountersOK: 0, linkhealth.CountersFirst: 1, linkhealth.CountersSaturated: 2,
	linkhealth.CountersReset: 3, linkhealth.CountersUnavailable: 4, "off": 5}

// collectHealth emits the per-destination path series and the per-link
// series (nothing while health is off: on is false), and returns the
// links that are not healthy or are congested (linkinfo.go names them).
// The logs forget the links that have no series (health_log.go).
func collectHealth(ch chan<- prometheus.Metric, on bool, totals *healthTotals, ctrs *ctrLog, names []string, dests []*destState,
	ber map[string]config.BERTargets) (unhealthy []*linkhealth.Link) {
	mark := ctrs.mark()
	if !on { // off, or turned off by a reload: no health series
		for _, s := range dests {
			s.setHealth(nil)
		}
		ctrs.keep(nil, mark)
		return nil
	}
	// A snapshot, so that no trace waits for a slow scrape.
	paths := make([]*linkhealth.PathHealth, len(dests))
	for i, s := range dests {
		paths[i] = s.lastHealth()
	}
	mads, checks := totals.read()
	ch <- prometheus.MustNewConstMetric(dHealthMADs, prometheus.CounterValue, float64(mads))
	ch <- prometheus.MustNewConstMetric(dHealthChecks, prometheus.CounterValue, float64(checks))
	var (
		dHealthy  = desc("path_healthy", "1 if every link of the last traced path is healthy (see link_healthy).", names...)
		dRate     = desc("path_rate_bytes_per_second", "Bottleneck data rate of the last traced path, in bytes per second (bits / 8).", names...)
		dMTU      = desc("path_mtu_bytes", "Smallest NeighborMTU along the last traced path.", names...)
		dDegraded = desc("path_degraded_links", "Links of the last traced path that are not active, narrower or slower than they could be or than expected.", names...)
		dErrors   = desc("path_link_errors", "Error counter increments in the last interval on the links of the last traced path.", names...)
		dWait     = pathWaitDesc(names) // health.go
	)
	links := map[localize.Link]*linkhealth.Link{}
	for i, s := range dests {
		ph := paths[i]
		if ph == nil {
			continue
		}
		// The destination's label pairs, shared (labels.go): one
		// allocation for its six samples.
		samples := make([]sample, 0, 6)
		g := func(d *prometheus.Desc, v float64) {
			samples = append(samples, sample{desc: d, labels: s.base, typ: prometheus.GaugeValue, val: v})
			ch <- &samples[len(samples)-1]
		}
		g(dHealthy, b2f(ph.Healthy))
		g(dRate, ph.RateBits/8)
		g(dMTU, float64(ph.MTUBytes))
		g(dDegraded, float64(ph.DegradedLinks))
		g(dErrors, float64(ph.LinkErrors))
		g(dWait, ph.XmitWaitRatio)
		for j := range ph.Links {
			l := &ph.Links[j]
			links[localize.NewLink(l.A.NodeGUID, l.A.Port, l.B.NodeGUID, l.B.Port)] = l // one key for both directions
		}
	}
	keys := make([]localize.Link, 0, len(links))
	for k := range links {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].Less(keys[j]) })
	ctrs.keep(links, mark)
	for _, k := range keys {
		l := links[k]
		lv := k.Labels()
		// The link's label pairs are shared by its series without a
		// label of their own (labels.go).
		set := newLabelSet(linkLabels, lv)
		samples := make([]sample, 0, 10)
		g := func(d *prometheus.Desc, v float64, extra ...string) {
			if len(extra) > 0 || len(samples) == cap(samples) {
				ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append(lv, extra...)...)
				return
			}
			samples = append(samples, sample{desc: d, labels: set, typ: prometheus.GaugeValue, val: v})
			ch <- &samples[len(samples)-1]
		}
		g(dLinkHealth, b2f(l.Healthy))
		g(dLinkStatus, 1, l.Verdict)
		g(dLinkWidth, float64(l.Width))
		g(dLinkRate, l.RateBits/8)
		g(dLinkCapable, l.CouldBeRateBits/8)
		g(dLinkMTU, float64(l.MTUBytes))
		g(dLinkErrors, float64(l.Errors))
		g(dLinkWait, float64(l.XmitWait))
		g(dLinkCtr, 1, counterState(l))
		collectLinkCongestion(g, l)
		// A link whose error counters rose is named too, limits or not:
		// IBTracerLinkErrorsRising names its ends from link_info.
		if !l.Healthy || l.Congested || l.Errors > 0 {
			unhealthy = append(unhealthy, l)
		}
	}
	// Links whose BER counters are exported are named too: the BER
	// alerts name their ends from link_info (ber.go).
	return append(unhealthy, collectBER(ch, paths, ber)...)
}

// counterState is the worse of a link's two ends' counter states.
func counterState(l *linkhealth.Link) string {
	st := linkhealth.CountersOK
	for _, c := range []*linkhealth.PortCounterReading{l.A.Counters, l.B.Counters} {
		s := "off"
		if c != nil {
			s = c.State
		}
		if counterRank[s] > counterRank[st] {
			st = s
		}
	}
	return st
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Congestion (health: xmit_wait_limit; docs/metrics.md, "Congestion"):
// a link's PortXmitWait as a share of the interval's ticks, the VL that
// waited, and each destination's most congested link.

var (
	dLinkWaitRatio = desc("link_xmit_wait_ratio", "The larger of the link's two ends' PortXmitWait increments in the last "+
		"interval, as a share of the interval's ticks (0 while unknown, see link_counters_state).", linkLabels...)
	dLinkWaitVL = desc("link_xmit_wait_vl", "1 for the VL that waited most at the link's waiting end (PortVLXmitWaitCounters); "+
		"only for links that waited, at a PMA with the attribute.", append(linkLabels, "vl")...)
)

// collectLinkCongestion emits link l's congestion series; g emits a
// gauge with the link's labels (and extra ones).
func collectLinkCongestion(g func(d *prometheus.Desc, v float64, extra ...string), l *linkhealth.Link) {
	g(dLinkWaitRatio, l.XmitWaitRatio)
	if l.XmitWaitVL != nil && l.XmitWaitRatio > 0 {
		g(dLinkWaitVL, 1, strconv.Itoa(*l.XmitWaitVL))
	}
}

// pathWaitDesc is the per-destination rollup; names are the
// destinations' label names.
func pathWaitDesc(names []string) *prometheus.Desc {
	return desc("path_xmit_wait_ratio", "The largest link_xmit_wait_ratio on the last traced path: its most congested "+
		"link (named in /traces, health.xmit_wait_hop).", names...)
}
