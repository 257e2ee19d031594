package collector

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibtracer/ibtracer_exporter/linkhealth"
)

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
