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

// PathCongestion is the most congested link of a destination's last
// path, as /traces shows it: the link whose end waited the largest share
// of the interval to transmit.
type PathCongestion struct {
	Hop       int     `json:"hop"` // the link from hop Hop-1 to hop Hop
	Ratio     float64 `json:"xmit_wait_ratio"`
	Congested bool    `json:"congested"` // the ratio reached health.xmit_wait_limit
	// From and To are the link's ends in the path's direction; WaitingEnd
	// is the one whose transmit waited ("a": From, "b": To), VL the VL
	// that waited most there (absent: not known).
	From       linkhealth.LinkEnd `json:"from"`
	To         linkhealth.LinkEnd `json:"to"`
	WaitingEnd string             `json:"waiting_end,omitempty"`
	VL         *int               `json:"vl,omitempty"`
}

// pathCongestion is ph's most congested link (nil: health off, or no
// link's ratio known, or none waited).
func pathCongestion(ph *linkhealth.PathHealth) *PathCongestion {
	if ph == nil || ph.XmitWaitHop == 0 {
		return nil
	}
	for i := range ph.Links {
		l := &ph.Links[i]
		if l.Hop == ph.XmitWaitHop {
			from, to := l.A, l.B
			from.Counters, to.Counters = nil, nil // in the link series and ibtracer --health
			return &PathCongestion{Hop: l.Hop, Ratio: l.XmitWaitRatio, Congested: l.Congested, From: from, To: to,
				WaitingEnd: l.XmitWaitEnd, VL: l.XmitWaitVL}
		}
	}
	return nil
}
