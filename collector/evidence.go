package collector

import (
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibtracer/ibtracer_exporter/internal/logonce"
	"github.com/ibtracer/ibtracer_exporter/localize"
)

// Link evidence (config evidence:): at every scrape, each destination's
// last trace, previous path and path health become a localize.Path, and
// the paths are summed per link (docs/metrics.md, "Link evidence").
// Nothing is kept between scrapes but what the destinations keep anyway.

var (
	dLinkPaths = desc("link_paths", "Paths (the current and the previous path of each destination) that cross the link "+
		"(only links a bad path names, as link_bad_paths).", localize.LabelNames...)
	dLinkBadPaths = desc("link_bad_paths", "Paths crossing the link that are bad now and that the link can explain "+
		"(only links with at least one).", localize.LabelNames...)
	dLinkSuspicion = desc("link_suspicion", "This exporter's suspicion of the link: its part of the bad paths' votes "+
		"(each bad path gives one vote, shared among the links that can explain it; only links a bad path names).", localize.LabelNames...)
	dEvidencePaths    = desc("evidence_paths", "Destinations' paths judged for the link evidence (one per destination traced).")
	dEvidenceBadPaths = desc("evidence_bad_paths", "Of those, the paths that are bad now; the link_suspicion of all links sums to it.")
	dEvidenceCauses   = desc("evidence_bad_path_causes", "Bad paths by why they are bad (a path with two causes counts under both).", "cause")

	dEvidenceCapped = desc("evidence_links_capped", "Links a bad path names that the last scrape left out, the least suspected, "+
		"above evidence.max_links.")
)

// linkEvidence is the scrape's link evidence; it remembers whether the
// last scrape left links out, so that the log says so once when it
// starts and once when it stops.
type linkEvidence struct {
	mu     sync.Mutex          // guards capped
	capped logonce.State[bool] // the last scrape left links out
}

// set records whether a scrape left n links out of max, and logs the
// change.
func (c *linkEvidence) set(logger log.Logger, n, max int) {
	c.mu.Lock()
	old, changed := c.capped.Observe(n > 0, time.Time{})
	c.mu.Unlock()
	was := old.Known && old.From
	switch {
	case !changed:
	case n > 0 && !was:
		level.Warn(logger).Log("msg", "link evidence capped: the least suspected links are left out of /metrics",
			"links_left_out", n, "max_links", max, "hint", "see ibtracer_evidence_links_capped; raise evidence.max_links if they matter")
	case n == 0 && was:
		level.Info(logger).Log("msg", "link evidence no longer capped", "max_links", max)
	}
}

// collect emits the link evidence (nothing while it is off):
// the three link series for the links a bad path names, at most
// evidence.max_links of them (the most suspected), and no other:
// every link the paths cross was 18,002 series, 2.1 MB of /metrics, at
// 10,000 destinations on the 10,240-port fat tree (docs/metrics.md,
// "Series budget"). It returns the links it emitted (linkinfo.go names
// their ends).
func (c *linkEvidence) collect(ch chan<- prometheus.Metric, logger log.Logger, rt *installed, dests []*destState) []localize.Link {
	on, latency, maxLinks := rt.evidence()
	if !on {
		c.set(logger, 0, 0)
		return nil
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
	// Rank keeps the links a bad path names (suspicion above 0), the
	// most suspected first; no other link has a series.
	named := localize.Rank(acc.Evidence(), localize.BySuspicion)
	left := 0
	if maxLinks > 0 && len(named) > maxLinks {
		named, left = named[:maxLinks], len(named)-maxLinks
	}
	g(dEvidenceCapped, float64(left))
	c.set(logger, left, maxLinks)
	links := make([]localize.Link, 0, len(named))
	for _, le := range named {
		lv := le.Link.Labels()
		g(dLinkPaths, float64(le.Paths), lv...)
		g(dLinkBadPaths, float64(le.BadPaths), lv...)
		g(dLinkSuspicion, le.Suspicion, lv...)
		links = append(links, le.Link)
	}
	return links
}
