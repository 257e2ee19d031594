package localizeeval

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
	exporters: 64, sample: 24, interval: time.Minute, workers: 8, seed: 1}

// locScales are the fleets of -loc.scale: "" is locFleetParams; 1k and
// 10k run the packaged sample, interval and share_validation (8
// destinations every 60 s, 450 s; packaging/ibtracer.yml)
// from 1,000 and 10,000 exporters on fat trees of 1,040 and 10,160 hosts
// (two cables between every leaf and spine, as above; 254 ports at most
// per switch). They start as a fleet does, over the exporters' start
// window of 8 intervals (startRound), so that the verdicts shared for
// 450 s expire each at its own time; with the default share_validation
// (10 s) they all expire within the interval, and it makes no
// difference.
var locScales = map[string]locParams{
	"": locFleetParams,
	"1k": {leaves: 13, spines: 18, hostsPerLeaf: 80, linksPerPair: 2, exporters: 1000, sample: 8, interval: time.Minute, workers: 4, seed: 1,
		shareValidation: 450 * time.Second, startRounds: 8},
	"10k": {leaves: 127, spines: 18, hostsPerLeaf: 80, linksPerPair: 2, exporters: 10000, sample: 8, interval: time.Minute, workers: 4, seed: 1,
		shareValidation: 450 * time.Second, startRounds: 8},
}

// fleetLinkEvidence is one link's evidence summed over the exporters, as
// sum by (link) of ibtracer_link_paths, ibtracer_link_bad_paths and
// ibtracer_link_suspicion; votes are 007's plain votes on the same paths.
type fleetLinkEvidence struct {
	paths, bad float64
	suspicion  float64
	votes      float64
	exporters  float64                // exporters with a bad path on the link
	causes     map[localize.Cause]int // of the bad paths naming it (for the log)
}

// fleetState is every exporter's memory of its destinations' paths, as
// collector/history.go keeps it: the last path that reached the destination and
// the one before its last change.
type fleetState struct {
	path, prev []map[string]*trace.Result
	// last is each exporter's evidence of the last interval, as its
	// series would show it (rules_test.go writes them).
	last []exporterEvidence
}

// exporterEvidence is what one exporter's link evidence series hold.
type exporterEvidence struct {
	links    []localize.LinkEvidence
	badPaths int // ibtracer_evidence_bad_paths
}

func newFleetState(n int) *fleetState {
	st := &fleetState{path: make([]map[string]*trace.Result, n), prev: make([]map[string]*trace.Result, n)}
	for i := range st.path {
		st.path[i], st.prev[i] = map[string]*trace.Result{}, map[string]*trace.Result{}
	}
	return st
}

// remember records exporter i's trace r of dest and returns its previous
// path, as Exporter's destState.previousPath gives it.
func (st *fleetState) remember(i int, dest string, r *trace.Result) *trace.Result {
	if r.Status.Walked() {
		if old := st.path[i][dest]; old != nil && old.Signature() != r.Signature() {
			st.prev[i][dest] = old
		}
		st.path[i][dest] = r
		return st.prev[i][dest]
	}
	return st.path[i][dest]
}

// observe takes one interval's paths of every exporter, makes each
// destination's localize.Path as the exporter does (evidence.go) and sums
// them per exporter through a localize.Accumulator, as a scrape does. It
// returns the fleet's evidence: the sums over the exporters, as the
// recording rules take them.
func (st *fleetState) observe(paths [][]locPath) map[localize.Link]*fleetLinkEvidence {
	fleet := map[localize.Link]*fleetLinkEvidence{}
	st.last = make([]exporterEvidence, len(paths))
	for i, ps := range paths {
		var acc localize.Accumulator
		causes := map[localize.Link]map[localize.Cause]int{}
		for _, p := range ps {
			lp := localize.FromTrace(localize.Trace{Current: p.res, Previous: st.remember(i, p.dest, p.res), Health: p.ph})
			acc.Add(lp)
			if lp.Bad {
				st.last[i].badPaths++
			}
			for _, l := range lp.Suspects {
				if causes[l] == nil {
					causes[l] = map[localize.Cause]int{}
				}
				for _, c := range lp.Causes {
					causes[l][c]++
				}
			}
		}
		st.last[i].links = acc.Evidence()
		for _, le := range st.last[i].links {
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

// rank orders the links by score, then by bad paths, then by key,
// keeping those with a score above 0.
func rank(ev map[localize.Link]*fleetLinkEvidence, score func(*fleetLinkEvidence) float64) []localize.Link {
	var out []localize.Link
	for k, e := range ev {
		if score(e) > 0 {
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

// vote007 is 007's plain voting: every bad path gives 1/h to each of the
// h links it crosses; the link with the most votes is blamed as soon as
// there is a vote.
var vote007 = locScheme{name: "007 votes",
	rank: func(ev map[localize.Link]*fleetLinkEvidence) []localize.Link {
		return rank(ev, func(e *fleetLinkEvidence) float64 { return e.votes })
	},
	blamed: func(_ map[localize.Link]*fleetLinkEvidence, ranked []localize.Link) []localize.Link {
		return ranked[:min(len(ranked), 1)]
	},
}

// The fleet verdict's thresholds (dashboards/ibtracer.rules.yml,
// IBTracerLinkSuspected): a link is blamed when its score is at least
// verdictMinScore, at least verdictMinBad bad paths name it, and its
// score is at least verdictOfMax of the highest score.
const (
	verdictMinScore = 1
	verdictMinBad   = 2
	verdictOfMax    = 0.5
)

// fleetVerdict is what the recording rules and IBTracerLinkSuspected
// compute: the score is the exporters' suspicion summed
// (ibtracer:link_suspicion:score), and the links blamed are the ones the
// alert fires for, best first.
var fleetVerdict = locScheme{name: "fleet verdict",
	rank: func(ev map[localize.Link]*fleetLinkEvidence) []localize.Link {
		return rank(ev, func(e *fleetLinkEvidence) float64 { return e.suspicion })
	},
	blamed: func(ev map[localize.Link]*fleetLinkEvidence, ranked []localize.Link) []localize.Link {
		var out []localize.Link
		for _, l := range ranked {
			if e := ev[l]; e.suspicion >= verdictMinScore && e.bad >= verdictMinBad && e.suspicion >= verdictOfMax*ev[ranked[0]].suspicion {
				out = append(out, l)
			}
		}
		return out
	},
}
