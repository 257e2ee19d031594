package collector

import (
	"sort"
	"time"

	"github.com/ibtracer/ibtracer_exporter/localize"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// locFleetParams: 64 exporters on a fat tree of 128 hosts (8 leaves, 4
// spines, two cables between every leaf and spine, so that a spine can
// send a LID out of the wrong one), 24 sampled destinations each.
var locFleetParams = locParams{leaves: 8, spines: 4, hostsPerLeaf: 16, linksPerPair: 2,
	exporters: 64, sample: 24, interval: time.Minute, workers: 8}

// fleetLinkEvidence is one link's evidence summed over the exporters, as
// sum by (link) of ibtracer_link_paths, ibtracer_link_bad_paths and
// ibtracer_link_suspicion; votes are 007's plain votes on the same paths.
type fleetLinkEvidence struct {
	paths, bad float64
	suspicion  float64
	votes      float64
	exporters  float64 // exporters with a bad path on the link
	causes     map[localize.Cause]int // of the bad paths naming it (for the log)
}

// fleetState is every exporter's memory of its destinations' previous
// paths.
type fleetState struct {
	prev []map[string]*trace.Result
}

func newFleetState(n int) *fleetState {
	st := &fleetState{prev: make([]map[string]*trace.Result, n)}
	for i := range st.prev {
		st.prev[i] = map[string]*trace.Result{}
	}
	return st
}

// observe takes one interval's paths of every exporter, sums each
// exporter's through a localize.Accumulator, as the exporter does at a
// scrape, and returns the fleet's evidence: the sums over exporters.
func (st *fleetState) observe(paths [][]locPath) map[localize.Link]*fleetLinkEvidence {
	fleet := map[localize.Link]*fleetLinkEvidence{}
	for i, ps := range paths {
		known := map[[2]uint64]localize.Link{}
		for _, p := range ps {
			for _, r := range []*trace.Result{p.res, st.prev[i][p.dest]} {
				for _, l := range resultLinks(r) {
					known[[2]uint64{uint64(l.NodeGUID), uint64(l.Port)}] = l
					known[[2]uint64{uint64(l.RemoteNodeGUID), uint64(l.RemotePort)}] = l
				}
			}
		}
		var acc localize.Accumulator
		causes := map[localize.Link]map[localize.Cause]int{}
		for _, p := range ps {
			lp := evidencePath(p, st.prev[i][p.dest], known)
			acc.Add(lp)
			for _, l := range lp.Suspects {
				if causes[l] == nil {
					causes[l] = map[localize.Cause]int{}
				}
				for _, c := range lp.Causes {
					causes[l][c]++
				}
			}
			if len(p.res.Hops) > 1 && p.res.Status == trace.StatusOK {
				st.prev[i][p.dest] = p.res
			}
		}
		for _, le := range acc.Evidence() {
			ev := fleet[le.Link]
			if ev == nil {
				ev = &fleetLinkEvidence{causes: map[localize.Cause]int{}}
				fleet[le.Link] = ev
			}
			for c, n := range causes[le.Link] {
				ev.causes[c] += n
			}
			ev.paths += float64(le.Paths)
			ev.bad += float64(le.BadPaths)
			ev.suspicion += le.Suspicion
			ev.votes += le.Votes
			if le.BadPaths > 0 {
				ev.exporters++
			}
		}
	}
	return fleet
}

// resultLinks are the links a trace crossed, from the source.
func resultLinks(r *trace.Result) []localize.Link {
	if r == nil {
		return nil
	}
	var out []localize.Link
	for i := 0; i+1 < len(r.Hops); i++ {
		a, b := r.Hops[i], r.Hops[i+1]
		out = append(out, localize.NewLink(a.NodeGUID, a.OutPort, b.NodeGUID, b.InPort))
	}
	return out
}

// evidencePath is one destination's localize.Path: its trace, its
// health, its previous path. known finds a link by one of its ends among
// the exporter's paths (for a mismatch, the link into the port the hop
// should have been reached by).
func evidencePath(p locPath, prev *trace.Result, known map[[2]uint64]localize.Link) localize.Path {
	r := p.res
	lp := localize.Path{Links: resultLinks(r)}
	before := resultLinks(prev)
	if !sameLinks(before, lp.Links) {
		lp.Previous = before
	}
	if r.Status != trace.StatusOK && r.Status != trace.StatusMismatch {
		suspects := append([]localize.Link{}, lp.Links...)
		if len(before) > len(lp.Links) && sameLinks(before[:len(lp.Links)], lp.Links) {
			suspects = append(suspects, before[len(lp.Links)])
		}
		lp.Blame(localize.CauseFailed, suspects...)
	}
	for i, h := range r.Hops {
		switch h.Agent {
		case trace.AgentMismatch:
			if i == 0 {
				continue
			}
			l := lp.Links[i-1]
			if h.ExpectedInPort != 0 && h.ExpectedInPort != h.InPort {
				if k, ok := known[[2]uint64{uint64(h.NodeGUID), uint64(h.ExpectedInPort)}]; ok {
					l = k
				}
			}
			lp.Blame(localize.CauseMismatch, l)
		case trace.AgentLost:
			lp.Blame(localize.CauseLost, lp.Links[:i]...)
		}
	}
	if p.ph != nil {
		for _, l := range p.ph.Links {
			// Unhealthy, or erroring: the issue's "a degraded or erroring
			// link" (without limits: configured, any error increment).
			if (!l.Healthy && l.Verdict != "unknown") || (l.ErrorsKnown && l.Errors > 0) {
				lp.Blame(localize.CauseLink, localize.NewLink(l.A.NodeGUID, l.A.Port, l.B.NodeGUID, l.B.Port))
			}
		}
	}
	return lp
}

func sameLinks(a, b []localize.Link) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// rank orders the links by score, then by bad paths, then by key, keeping
// those keep admits.
func rank(ev map[localize.Link]*fleetLinkEvidence, score func(*fleetLinkEvidence) float64, keep func(*fleetLinkEvidence) bool) []localize.Link {
	var out []localize.Link
	for k, e := range ev {
		if keep(e) {
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := ev[out[i]], ev[out[j]]
		if sa, sb := score(a), score(b); sa != sb {
			return sa > sb
		}
		if a.bad != b.bad {
			return a.bad > b.bad
		}
		return out[i].Less(out[j])
	})
	return out
}

// vote007 is 007's plain voting: every bad path gives 1/h to each of its
// h links; the most votes first, any vote blames.
var vote007 = locScheme{name: "007 votes", blame: func(ev map[localize.Link]*fleetLinkEvidence) []localize.Link {
	return rank(ev, func(e *fleetLinkEvidence) float64 { return e.votes }, func(e *fleetLinkEvidence) bool { return e.votes > 0 })
}}

// Fleet verdict parameters (dashboards/ibtracer.rules.yml).
const (
	verdictMinBad   = 2   // bad paths, fleet-wide, before a link is blamed
	verdictMinScore = 0.1 // the score below which a link is not blamed
)

// fleetScore is ibtracer:link_suspicion:score: the share of the paths
// crossing the link that are bad, with one good path assumed, so that a
// link few paths cross needs more of them bad.
func fleetScore(e *fleetLinkEvidence) float64 { return e.bad / (e.paths + 1) }

var (
	schemeSusp = locScheme{name: "suspicion", blame: func(ev map[localize.Link]*fleetLinkEvidence) []localize.Link {
		return rank(ev, func(e *fleetLinkEvidence) float64 { return e.suspicion }, func(e *fleetLinkEvidence) bool { return e.suspicion > 0 })
	}}
	schemeSuspNorm = locScheme{name: "susp/paths", blame: func(ev map[localize.Link]*fleetLinkEvidence) []localize.Link {
		sc := func(e *fleetLinkEvidence) float64 { return e.suspicion / (e.paths + 1) }
		return rank(ev, sc, func(e *fleetLinkEvidence) bool { return e.suspicion > 0 })
	}}
)

var fleetVerdict = locScheme{name: "fleet verdict", blame: func(ev map[localize.Link]*fleetLinkEvidence) []localize.Link {
	return rank(ev, fleetScore, func(e *fleetLinkEvidence) bool {
		return e.bad >= verdictMinBad && fleetScore(e) >= verdictMinScore
	})
}}
