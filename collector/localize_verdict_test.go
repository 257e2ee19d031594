package collector

import (
	"sort"
	"time"

	"github.com/ibtracer/ibtracer_exporter/linkhealth"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// locFleetParams: 64 exporters on a fat tree of 128 hosts (8 leaves, 4
// spines, two cables between every leaf and spine, so that a spine can
// send a LID out of the wrong one), 24 sampled destinations each.
var locFleetParams = locParams{leaves: 8, spines: 4, hostsPerLeaf: 16, linksPerPair: 2,
	exporters: 64, sample: 24, interval: time.Minute, workers: 8}

// fleetLinkEvidence is one link's evidence summed over the exporters, as
// sum by (link) of ibtracer_link_paths, ibtracer_link_bad_paths and
// ibtracer_link_suspicion.
type fleetLinkEvidence struct {
	paths, bad float64
	votes      float64
}

// fleetState is every exporter's memory of its destinations' previous
// paths.
type fleetState struct {
	prev []map[string]locPath
}

func newFleetState(n int) *fleetState {
	st := &fleetState{prev: make([]map[string]locPath, n)}
	for i := range st.prev {
		st.prev[i] = map[string]locPath{}
	}
	return st
}

// observe takes one interval's paths of every exporter and returns the
// fleet's evidence.
func (st *fleetState) observe(paths [][]locPath) map[linkhealth.LinkKey]*fleetLinkEvidence {
	fleet := map[linkhealth.LinkKey]*fleetLinkEvidence{}
	for i, ps := range paths {
		for _, p := range ps {
			links := pathLinks(p.res)
			if prev, ok := st.prev[i][p.dest]; ok && p.res.Status != trace.StatusOK {
				links = union(links, pathLinks(prev.res))
			}
			bad := pathBad(p)
			for _, k := range links {
				ev := fleet[k]
				if ev == nil {
					ev = &fleetLinkEvidence{}
					fleet[k] = ev
				}
				ev.paths++
				if bad {
					ev.bad++
					ev.votes += 1 / float64(len(links))
				}
			}
			if p.res.Status == trace.StatusOK {
				st.prev[i][p.dest] = p
			}
		}
	}
	return fleet
}

func pathLinks(r *trace.Result) []linkhealth.LinkKey {
	var out []linkhealth.LinkKey
	for i := 0; i+1 < len(r.Hops); i++ {
		a, b := r.Hops[i], r.Hops[i+1]
		out = append(out, orderedLinkKey(a.NodeGUID, a.OutPort, b.NodeGUID, b.InPort))
	}
	return out
}

func union(a, b []linkhealth.LinkKey) []linkhealth.LinkKey {
	seen := map[linkhealth.LinkKey]bool{}
	var out []linkhealth.LinkKey
	for _, k := range append(a, b...) {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

func pathBad(p locPath) bool {
	if p.res.Status != trace.StatusOK {
		return true
	}
	for _, h := range p.res.Hops {
		if h.Agent == trace.AgentMismatch || h.Agent == trace.AgentLost {
			return true
		}
	}
	return p.ph != nil && !p.ph.Healthy
}

// rank orders the links by score, then by bad paths, then by key, keeping
// those keep admits.
func rank(ev map[linkhealth.LinkKey]*fleetLinkEvidence, score func(*fleetLinkEvidence) float64, keep func(*fleetLinkEvidence) bool) []linkhealth.LinkKey {
	var out []linkhealth.LinkKey
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
		ki, kj := out[i], out[j]
		if ki.AGUID != kj.AGUID {
			return ki.AGUID < kj.AGUID
		}
		return ki.APort < kj.APort
	})
	return out
}

// vote007 is 007's plain voting: every bad path gives 1/h to each of its
// h links; the most votes first, any vote blames.
var vote007 = locScheme{name: "007 votes", blame: func(ev map[linkhealth.LinkKey]*fleetLinkEvidence) []linkhealth.LinkKey {
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

var fleetVerdict = locScheme{name: "fleet verdict", blame: func(ev map[linkhealth.LinkKey]*fleetLinkEvidence) []linkhealth.LinkKey {
	return rank(ev, fleetScore, func(e *fleetLinkEvidence) bool {
		return e.bad >= verdictMinBad && fleetScore(e) >= verdictMinScore
	})
}}
