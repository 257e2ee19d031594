package localize

import (
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/linkhealth"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// Trace is what a destination's traces say, for FromTrace.
type Trace struct {
	// Current is the destination's last trace (nil: none yet).
	Current *trace.Result
	// Previous is its previous path: the last trace before Current that
	// reached the destination by another path, or, when Current did not
	// reach it, the last one that did (nil: none).
	Previous *trace.Result
	// Health is Current's path health (nil: health off, or no link).
	Health *linkhealth.PathHealth
	// LatencyThreshold: a path whose round trip to the destination's own
	// agent is above it is bad (0: latency is not judged).
	LatencyThreshold time.Duration
}

// PathLinks are the links a trace crossed, in order: the egress port of
// each hop and the ingress port of the next (the link-health Link's
// ends).
func PathLinks(r *trace.Result) []Link {
	if r == nil || len(r.Hops) < 2 {
		return nil
	}
	ls := make([]Link, 0, len(r.Hops)-1)
	for i := 1; i < len(r.Hops); i++ {
		a, b := &r.Hops[i-1], &r.Hops[i]
		ls = append(ls, NewLink(a.NodeGUID, a.OutPort, b.NodeGUID, b.InPort))
	}
	return ls
}

// FromTrace is a destination's evidence (docs/metrics.md, "Link
// evidence"): the links of its current and previous path, and, when the
// current trace is bad, why and which links can explain it:
//   - failed (unreachable, too many hops): the link it could not get
//     past, which the previous path names (blameFailure), else every link
//     it crossed;
//   - a hop mismatched: the link at whose far end the first one is: the
//     path's link into it when the validation MAD was expected in by the
//     path's port, else the link its route was to arrive by
//     (Hop.ExpectedFrom), else, when that is unknown, the links in front
//     of it;
//   - a hop's validation lost: the links in front of it, unless the
//     destination answered its own validation (throughAnswered);
//   - a link of the health check not healthy, or congested (linkhealth
//     keeps a congested link healthy: waiting is not an error): that link;
//   - the round trip to the destination's agent above the threshold:
//     every link of the path.
//
// Failures that say nothing of the links (the SA could not resolve the
// destination, the local device failed, the address led to another
// port) leave the path good: they are not the fabric's links. Neither
// does a router that does not forward (router_not_forwarding): the
// walk's MADs crossed every local link to the router and back, and the
// remote SA's silence is the router's or the other subnet's; only the
// local hops' own validations blame (a lost or mismatched hop).
//
// A multicast path (mlid: destinations, Result.MLID set) is no evidence
// at all: its hops are read from the group's MFTs and no MAD of it
// crosses the links it names, and a trace that stops where the group's
// tree misses the member is a membership or MFT matter (the member left
// the group, the SM has not added it yet), not a cable. Its Path is
// empty: no link, not bad.
func FromTrace(in Trace) Path {
	r := in.Current
	if multicast(r) || multicast(in.Previous) {
		return Path{}
	}
	p := Path{Links: PathLinks(r)}
	if prev := PathLinks(in.Previous); !sameLinks(prev, p.Links) {
		p.Previous = prev
	}
	if r == nil {
		return p
	}
	switch {
	case r.Status.Walked(): // ok, a mismatch, or left the subnet at a router
		blameHops(&p, r)
		blameLatency(&p, r, in.LatencyThreshold)
	case r.Status == trace.StatusUnreachable, r.Status == trace.StatusTooLong:
		if r.Reason == trace.ReasonRouter {
			blameHops(&p, r) // the router's fault, not the local links'
			break
		}
		blameFailure(&p, r, in.Previous)
	}
	if in.Health != nil {
		for i := range in.Health.Links {
			if l := &in.Health.Links[i]; !l.Healthy || l.Congested {
				p.Blame(CauseLink, NewLink(l.A.NodeGUID, l.A.Port, l.B.NodeGUID, l.B.Port))
			}
		}
	}
	return p
}

// blameHops blames the first mismatched hop's ingress link (when the
// validation MAD was to arrive by it: else the link it was routed to
// arrive by, or, unknown, every link in front of the hop), the link
// every hop mismatched over another link was routed by, and the links
// in front of every hop whose validation was lost while the destination's
// was not answered.
func blameHops(p *Path, r *trace.Result) {
	mismatched := false
	for i := 1; i < len(r.Hops) && i <= len(p.Links); i++ {
		switch r.Hops[i].Agent {
		case trace.AgentMismatch, trace.AgentMismatchOtherLink:
			if mismatched { // the later ones follow from the first on the path
				continue
			}
			// One off the path (its own LID's route) explains no later
			// hop of this path: it does not hide them.
			mismatched = r.Hops[i].Agent == trace.AgentMismatch
			switch h := r.Hops[i]; {
			case h.ExpectedInPort == 0 || h.ExpectedInPort == h.InPort:
				p.Blame(CauseMismatch, p.Links[i-1])
			case h.ExpectedFrom != 0:
				// The link the tables route the validation MAD by, off
				// the path: the trace knows its near end.
				p.Blame(CauseMismatch, NewLink(h.ExpectedFrom, h.ExpectedFromPort, h.NodeGUID, h.ExpectedInPort))
			default:
				// The validation MAD's route into the hop is not the
				// path's and its last link is unknown, but it is on the
				// way to the hop.
				p.Blame(CauseMismatch, p.Links[:i]...)
			}
		case trace.AgentLost:
			if throughAnswered(r, i) {
				continue
			}
			p.Blame(CauseLost, p.Links[:i]...)
		}
	}
}

// throughAnswered says whether a hop after hop i answered its validation
// on the path's own route: the destination (the last hop), whose
// validation MAD is routed to the traced DLID, the path itself. Its
// round trip crossed every link in front of hop i in the same trace, so
// hop i's silence is its own (its agent busy, rate-limited or gone), not
// theirs. Without this, lost validations at random hops blamed the links
// in front of them, and the exporter's own link, in front of every hop,
// gathered the most suspicion of all under random MAD loss
// (docs/metrics.md, "Link evidence").
func throughAnswered(r *trace.Result, i int) bool {
	last := len(r.Hops) - 1
	if i >= last {
		return false
	}
	h := &r.Hops[last]
	return h.Agent == trace.AgentValidated || h.Agent == trace.AgentIngressUnknown
}

// blameLatency blames every link of a path whose round trip to the
// destination's own agent (its last hop) is above threshold.
func blameLatency(p *Path, r *trace.Result, threshold time.Duration) {
	if threshold <= 0 || len(r.Hops) < 2 || len(p.Links) == 0 {
		return
	}
	if h := &r.Hops[len(r.Hops)-1]; h.AgentAnswered() && h.AgentRTT > threshold {
		p.Blame(CauseLatency, p.Links...)
	}
}

// blameFailure blames the link a failed trace could not get past: the
// one the previous path took out of the last hop by its egress port (by
// any port when the hop has no egress: its table lost the route, as
// after the SM routed around a dead link), or, when the last hop is a CA
// whose own port is down, the link into it. Every MAD of the walk
// crossed the links before it and came back, so they are not named.
// When the previous path cannot name that link (none, or it did not
// leave that hop, or by another port), every link it crossed is a
// suspect. A trace that crossed no link and names none is
// left good: it says nothing of the links.
func blameFailure(p *Path, r *trace.Result, prev *trace.Result) {
	n := len(r.Hops)
	if n == 0 {
		return
	}
	last := r.Hops[n-1]
	if r.Reason == trace.ReasonPortDown && last.NodeType != ibmad.NodeTypeSwitch && len(p.Links) > 0 {
		p.Blame(CauseFailed, p.Links[len(p.Links)-1])
		return
	}
	if prev != nil {
		for j := 0; j+1 < len(prev.Hops); j++ {
			// The hop's egress, or, when its table no longer has the
			// route (the SM took out a dead link), the one it had.
			if h := prev.Hops[j]; h.NodeGUID == last.NodeGUID && h.OutPort != 0 && (last.OutPort == 0 || h.OutPort == last.OutPort) {
				nx := prev.Hops[j+1]
				p.Blame(CauseFailed, NewLink(h.NodeGUID, h.OutPort, nx.NodeGUID, nx.InPort))
				return
			}
		}
	}
	if len(p.Links) > 0 {
		p.Blame(CauseFailed, p.Links...)
	}
}

// multicast says whether r is a multicast trace (trace.TraceMulticast).
func multicast(r *trace.Result) bool { return r != nil && r.MLID != 0 }

func sameLinks(a, b []Link) bool {
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
