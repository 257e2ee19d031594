package pages

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/linkhealth"
	"github.com/ibtracer/ibtracer_exporter/localize"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// What the pages show of the fabric's health (docs/metrics.md, "Pages"):
// each destination's path health, the links the path health calls
// unhealthy, and the links the evidence suspects, each node by name with
// its GUID after. They are read from what the destinations keep, as the
// scrape reads them; nothing here is kept between requests.

// PathHealthView is a destination's last path health in /traces: whether
// every link is healthy, and each link's verdict in hop order.
type PathHealthView struct {
	Healthy bool `json:"healthy"`
	// Partial: the trace stopped short of the destination, and these are
	// the links as far as it got.
	Partial       bool             `json:"partial,omitempty"`
	DegradedLinks int              `json:"degraded_links"`
	LinkErrors    uint64           `json:"link_errors"`
	Links         []LinkHealthView `json:"links"`
}

// LinkHealthView is one link of a path: hop Hop-1 leaves by From, hop
// Hop enters by To.
type LinkHealthView struct {
	Hop      int      `json:"hop"`
	From     string   `json:"from"` // NAME {GUID}[port]
	To       string   `json:"to"`
	Verdict  string   `json:"verdict"`
	Healthy  bool     `json:"healthy"`
	Problems []string `json:"problems,omitempty"`
	Errors   uint64   `json:"errors,omitempty"`
}

// pathHealthView is ph for the pages (nil: no health).
func pathHealthView(ph *linkhealth.PathHealth) *PathHealthView {
	if ph == nil {
		return nil
	}
	v := &PathHealthView{Healthy: ph.Healthy, DegradedLinks: ph.DegradedLinks, LinkErrors: ph.LinkErrors,
		Links: make([]LinkHealthView, 0, len(ph.Links))}
	for i := range ph.Links {
		l := &ph.Links[i]
		v.Links = append(v.Links, LinkHealthView{Hop: l.Hop, From: endLabel(&l.A), To: endLabel(&l.B), Verdict: l.Verdict,
			Healthy: l.Healthy, Problems: linkProblems(l), Errors: l.Errors})
	}
	return v
}

// linkState is the link's health in a word for the pages: its verdict,
// or "errors" for a link whose verdict is ok but whose error counters
// rose over a limit (unhealthy all the same).
func linkState(verdict string, healthy bool) string {
	if verdict == linkhealth.LinkOK && !healthy {
		return "errors"
	}
	return verdict
}

// endLabel is a link end for a person: NAME {GUID}[port].
func endLabel(e *linkhealth.LinkEnd) string { return fmt.Sprintf("%s[%d]", e.Label(), e.Port) }

// linkProblems are what makes l unhealthy or congested, for a person.
func linkProblems(l *linkhealth.Link) []string {
	p := append([]string(nil), l.Problems...)
	if len(l.OverLimit) > 0 {
		p = append(p, "over limit: "+strings.Join(l.OverLimit, ", "))
	}
	if l.Congested {
		p = append(p, fmt.Sprintf("congested: PortXmitWait %.0f%% of the time", 100*l.XmitWaitRatio))
	}
	return p
}

// Summary is the path health in a few words: "ok", or how many links
// are degraded and how many errors rose.
func (v *PathHealthView) Summary() string {
	if v == nil {
		return ""
	}
	if v.Healthy && v.Partial {
		return fmt.Sprintf("ok as far as traced (%d link(s))", len(v.Links))
	}
	if v.Healthy {
		return "ok"
	}
	var parts []string
	if v.DegradedLinks > 0 {
		parts = append(parts, fmt.Sprintf("%d degraded link(s)", v.DegradedLinks))
	}
	if v.LinkErrors > 0 {
		parts = append(parts, fmt.Sprintf("%d link errors", v.LinkErrors))
	}
	for _, l := range v.Links {
		if !l.Healthy && len(parts) == 0 {
			parts = append(parts, "link "+fmt.Sprint(l.Hop)+" "+linkState(l.Verdict, l.Healthy))
		}
	}
	return "unhealthy: " + strings.Join(parts, ", ")
}

// linkRow is one link in the landing page's link tables: its two ends by
// name, the /traces filter that lists the destinations crossing it, and
// what the health check and the evidence say of it.
type linkRow struct {
	A, B     string // NAME {GUID}[port]
	Filter   string // the ?link= value: the first end by GUID (one node, whatever the names)
	Verdict  string // the link's health verdict ("" when no path health read it)
	Problems string
	Paths    int // destinations whose path (health) or paths (evidence) cross it
	BadPaths int
	// Suspicion is this exporter's suspicion (evidence; 0 without).
	Suspicion float64
}

// nodeLabels names nodes for the link tables: the names and descriptions
// of the destinations' hops.
type nodeLabels map[ibmad.GUID]trace.NamedNode

func (n nodeLabels) end(g ibmad.GUID, port uint8) string {
	nd, ok := n[g]
	if !ok {
		nd = trace.NamedNode{GUID: g}
	}
	return fmt.Sprintf("%s[%d]", nd.Label(), port)
}

// fabricHealth is what the landing page shows of the links: the links
// the path health calls unhealthy or congested (each once, with the
// destinations crossing it) and, with evidence on, the links the bad
// paths name, the most suspected first.
type fabricHealth struct {
	HealthOn     bool
	EvidenceOn   bool
	Unhealthy    []linkRow
	UnhealthyCut int // unhealthy links left out (maxSuspectRows)
	Suspected    []linkRow
	SuspectsCut  int // suspected links left out (maxSuspectRows)
}

// maxSuspectRows bounds the link tables of the landing page: at 2,000
// destinations a fabric-wide fault names hundreds of links; the page
// lists the most suspected (and the worst unhealthy) and says how many
// more there are.
const maxSuspectRows = 50

// newFabricHealth reads the link health and the evidence of snap's
// destinations.
func newFabricHealth(snap *Snapshot) fabricHealth {
	var fh fabricHealth
	dests := snap.Destinations
	names := hopNames(dests)
	unhealthy, states := linkStates(dests)
	fh.HealthOn = states != nil
	fh.Unhealthy, fh.UnhealthyCut = unhealthyRows(unhealthy)
	if !snap.Evidence {
		return fh
	}
	fh.EvidenceOn = true
	var acc localize.Accumulator
	for i := range dests {
		if ep, ok := dests[i].evidence(snap.EvidenceLatency); ok {
			acc.Add(ep)
		}
	}
	ranked := localize.Rank(acc.Evidence(), localize.BySuspicion)
	if len(ranked) > maxSuspectRows {
		fh.SuspectsCut = len(ranked) - maxSuspectRows
		ranked = ranked[:maxSuspectRows]
	}
	for _, le := range ranked {
		l := le.Link
		fh.Suspected = append(fh.Suspected, linkRow{A: names.end(l.NodeGUID, l.Port), B: names.end(l.RemoteNodeGUID, l.RemotePort),
			Filter: fmt.Sprintf("%s:%d", l.NodeGUID, l.Port), Verdict: states[l], Paths: le.Paths, BadPaths: le.BadPaths,
			Suspicion: le.Suspicion})
	}
	return fh
}

// hopNames are the names and descriptions of the nodes on dests' paths.
func hopNames(dests []Destination) nodeLabels {
	names := nodeLabels{}
	for i := range dests {
		for _, r := range dests[i].paths() {
			if r == nil {
				continue
			}
			for i := range r.Hops {
				h := &r.Hops[i]
				if _, ok := names[h.NodeGUID]; !ok {
					names[h.NodeGUID] = trace.NamedNode{GUID: h.NodeGUID, Name: h.NodeName, Desc: h.NodeDesc}
				}
			}
		}
	}
	return names
}

// unhealthyLink is a link the path health calls unhealthy or congested,
// as one path read it, and how many destinations' paths did.
type unhealthyLink struct {
	l     *linkhealth.Link
	paths int
}

// linkStates reads the destinations' last path health: the unhealthy or
// congested links, and the state (linkState) of every link read, an
// unhealthy reading winning over a healthy one (states is nil when no
// destination has a path health).
func linkStates(dests []Destination) (map[localize.Link]*unhealthyLink, map[localize.Link]string) {
	unhealthy := map[localize.Link]*unhealthyLink{}
	var states map[localize.Link]string
	for i := range dests {
		ph := dests[i].Health
		if ph == nil {
			continue
		}
		if states == nil {
			states = map[localize.Link]string{}
		}
		for i := range ph.Links {
			l := &ph.Links[i]
			k := localize.NewLink(l.A.NodeGUID, l.A.Port, l.B.NodeGUID, l.B.Port)
			if _, bad := unhealthy[k]; !bad {
				states[k] = linkState(l.Verdict, l.Healthy)
			}
			if l.Healthy && !l.Congested {
				continue
			}
			if unhealthy[k] == nil {
				unhealthy[k] = &unhealthyLink{l: l}
			}
			unhealthy[k].paths++
		}
	}
	return unhealthy, states
}

// unhealthyRows are the unhealthy links, the worst verdict first, then
// the most crossed; at most maxSuspectRows of them, and how many more.
func unhealthyRows(unhealthy map[localize.Link]*unhealthyLink) (rows []linkRow, cut int) {
	for _, a := range unhealthy {
		rows = append(rows, linkRow{A: endLabel(&a.l.A), B: endLabel(&a.l.B),
			Filter: fmt.Sprintf("%s:%d", a.l.A.NodeGUID, a.l.A.Port), Verdict: linkState(a.l.Verdict, a.l.Healthy),
			Problems: strings.Join(linkProblems(a.l), "; "), Paths: a.paths})
	}
	rank := map[string]int{}
	for i, v := range linkhealth.LinkVerdicts {
		rank[v] = i
	}
	rank["errors"] = rank[linkhealth.LinkCongested] // over a limit: below the degradations, above congestion
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if rank[a.Verdict] != rank[b.Verdict] {
			return rank[a.Verdict] < rank[b.Verdict]
		}
		if a.Paths != b.Paths {
			return a.Paths > b.Paths
		}
		return a.Filter < b.Filter
	})
	if len(rows) > maxSuspectRows {
		rows, cut = rows[:maxSuspectRows], len(rows)-maxSuspectRows
	}
	return rows, cut
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
