package localize

import (
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// multicastTo is the multicast path of group mlid along hostToHost's
// hops: no hop is validated (trace.TraceMulticast sends no validation MAD).
func multicastTo(mlid uint16) *trace.Result {
	r := hostToHost(0)
	r.MLID, r.ValidationNote = mlid, trace.MulticastNote
	for i := 1; i < len(r.Hops); i++ {
		r.Hops[i].Agent, r.Hops[i].ValidatedBy, r.Hops[i].AgentRTT = trace.AgentNotAsked, "", 0
	}
	return r
}

// TestMulticastPathsAreNotLinkEvidence: a multicast trace follows the
// MFTs of a group. When it stops where the group's tree misses the
// member (the member left the group, the SM has not yet added a switch
// to the tree), that is a membership or MFT matter, not a cable: the
// path must not blame the link its previous path used, and a multicast
// path crosses no link for the evidence either (no MAD of it crossed the
// links it names, so it exonerates nothing).
func TestMulticastPathsAreNotLinkEvidence(t *testing.T) {
	good := multicastTo(0xC001)
	left := &trace.Result{MLID: 0xC001, Status: trace.StatusUnreachable, Reason: trace.ReasonNoRoute,
		Hops: append([]trace.Hop(nil), good.Hops[:3]...)}
	left.Hops[2].OutPort = 0 // the spine's MFT entry has no port to the member
	for _, c := range []struct {
		name string
		in   Trace
	}{
		{"member left the group", Trace{Current: left, Previous: good}},
		{"tree reaches the member", Trace{Current: good, Previous: good}},
		{"first trace fails", Trace{Current: left}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := FromTrace(c.in)
			if p.Bad || len(p.Suspects) > 0 || len(p.Links) > 0 || len(p.Previous) > 0 {
				t.Fatalf("multicast path is link evidence: bad %v causes %v suspects %v links %v previous %v",
					p.Bad, p.Causes, p.Suspects, p.Links, p.Previous)
			}
		})
	}
}

// TestRouterNotForwardingBlamesNoLocalLink: a trace to another subnet
// that reached the router (every local hop validated) and whose query to
// the remote SA got no answer through it (router_not_forwarding) crossed
// every local link twice per MAD: the fault is the router or the subnet
// behind it, not a local cable. Its local hops' own validations still
// count: a hop lost on the way blames the links in front of it.
func TestRouterNotForwardingBlamesNoLocalLink(t *testing.T) {
	toRouter := func() *trace.Result {
		r := hostToHost(0)
		r.Status, r.Reason = trace.StatusUnreachable, trace.ReasonRouter
		last := &r.Hops[len(r.Hops)-1]
		last.NodeGUID, last.NodeType = 0x200, ibmad.NodeTypeRouter
		return r
	}
	good := toRouter()
	good.Status, good.Reason = trace.StatusLeftSubnet, ""
	rtrLink := NewLink(0x2, 2, 0x200, 1)
	notForwarding := toRouter()
	lost := toRouter()
	lost.Hops[3].Agent = trace.AgentLost
	lost.Hops[4].Agent = trace.AgentNotAsked // no answer from past the lost hop clears the links in front of it
	for _, c := range []struct {
		name     string
		in       Trace
		causes   []Cause
		suspects []Link
	}{
		{"router does not forward", Trace{Current: notForwarding, Previous: good}, nil, nil},
		{"router does not forward, no previous path", Trace{Current: notForwarding}, nil, nil},
		{"a local hop lost on the way", Trace{Current: lost, Previous: good}, []Cause{CauseLost}, links(h1L1, L1S2, L2S2)},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := FromTrace(c.in)
			if want := links(h1L1, L1S2, L2S2, rtrLink); !sameLinks(p.Links, want) {
				t.Errorf("links %v, want %v (the local path still counts as crossed)", p.Links, want)
			}
			if p.Bad != (len(c.causes) > 0) || len(p.Causes) != len(c.causes) {
				t.Fatalf("bad %v causes %v suspects %v, want causes %v", p.Bad, p.Causes, p.Suspects, c.causes)
			}
			if !sameLinks(p.Suspects, c.suspects) {
				t.Errorf("suspects %v, want %v", p.Suspects, c.suspects)
			}
		})
	}
}

// TestLeftSubnetIsJudgedAsWalked: a trace that left the subnet walked its
// local path as an ok trace does (trace.Status.Walked): a local hop lost
// on the way is evidence against the links in front of it, as on any
// other path, not a good path that clears them.
func TestLeftSubnetIsJudgedAsWalked(t *testing.T) {
	left := hostToHost(0)
	left.Status = trace.StatusLeftSubnet
	last := &left.Hops[len(left.Hops)-1]
	last.NodeGUID, last.NodeType = 0x200, ibmad.NodeTypeRouter
	left.Hops[3].Agent = trace.AgentLost
	last.Agent = trace.AgentNotAsked // no answer from past the lost hop clears the links in front of it
	p := FromTrace(Trace{Current: left})
	if !p.Bad || len(p.Causes) != 1 || p.Causes[0] != CauseLost || !sameLinks(p.Suspects, links(h1L1, L1S2, L2S2)) {
		t.Fatalf("bad %v causes %v suspects %v, want lost, blaming the links in front of the lost hop", p.Bad, p.Causes, p.Suspects)
	}
}
