package localize

import (
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/linkhealth"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// hostToHost is h1 (0x101) -> leaf 0x1 -> spine 0x12 -> leaf 0x2 -> h4
// (0x104), every hop validated by its agent in rtt.
func hostToHost(rtt time.Duration) *trace.Result {
	v := func(h trace.Hop) trace.Hop {
		h.Agent, h.ValidatedBy, h.AgentRTT = trace.AgentValidated, trace.ByAgent, rtt
		return h
	}
	return &trace.Result{Status: trace.StatusOK, Hops: []trace.Hop{
		{NodeGUID: 0x101, OutPort: 1, Agent: trace.AgentSource},
		v(trace.Hop{NodeGUID: 0x1, InPort: 1, OutPort: 11, NodeType: ibmad.NodeTypeSwitch}),
		v(trace.Hop{NodeGUID: 0x12, InPort: 1, OutPort: 2, NodeType: ibmad.NodeTypeSwitch}),
		v(trace.Hop{NodeGUID: 0x2, InPort: 11, OutPort: 2, NodeType: ibmad.NodeTypeSwitch}),
		v(trace.Hop{NodeGUID: 0x104, InPort: 1, NodeType: ibmad.NodeTypeCA}),
	}}
}

func links(ls ...Link) []Link { return ls }

func TestPathLinksAreTheHopsPorts(t *testing.T) {
	got := PathLinks(hostToHost(0))
	want := links(h1L1, L1S2, L2S2, h4L2)
	if !sameLinks(got, want) {
		t.Fatalf("links %v, want %v", got, want)
	}
	if PathLinks(nil) != nil || PathLinks(&trace.Result{Hops: []trace.Hop{{NodeGUID: 1}}}) != nil {
		t.Fatal("a trace with no link has links")
	}
}

func TestFromTrace(t *testing.T) {
	good := hostToHost(10 * time.Microsecond)
	slow := hostToHost(5 * time.Millisecond)
	mismatch := hostToHost(0)
	mismatch.Status = trace.StatusMismatch
	mismatch.Hops[3].Agent, mismatch.Hops[4].Agent = trace.AgentMismatch, trace.AgentMismatch
	mismatch.Hops[3].ExpectedInPort = 11
	mismatchOffPath := hostToHost(0)
	mismatchOffPath.Status = trace.StatusMismatch
	mismatchOffPath.Hops[2].Agent, mismatchOffPath.Hops[2].ExpectedInPort = trace.AgentMismatch, 3
	lost := hostToHost(0)
	lost.Hops[3].Agent, lost.Hops[4].Agent = trace.AgentLost, trace.AgentLost
	lostMidway := hostToHost(0)
	lostMidway.Hops[3].Agent = trace.AgentLost
	lostDestination := hostToHost(0)
	lostDestination.Hops[4].Agent = trace.AgentLost
	failed := &trace.Result{Status: trace.StatusUnreachable, Reason: trace.ReasonPortDown, Hops: good.Hops[:3:3]}
	failedNoPrev := failed
	downCA := &trace.Result{Status: trace.StatusUnreachable, Reason: trace.ReasonPortDown, Hops: good.Hops}
	noRoute := &trace.Result{Status: trace.StatusUnreachable, Reason: trace.ReasonNoRoute,
		Hops: append(append([]trace.Hop(nil), good.Hops[:2]...), trace.Hop{NodeGUID: 0x12, InPort: 1, NodeType: ibmad.NodeTypeSwitch})}
	resolve := &trace.Result{Status: trace.StatusResolve, Reason: trace.ReasonSA}
	rerouted := &trace.Result{Status: trace.StatusOK, Hops: []trace.Hop{
		{NodeGUID: 0x101, OutPort: 1}, {NodeGUID: 0x1, InPort: 1, OutPort: 10},
		{NodeGUID: 0x11, InPort: 1, OutPort: 2}, {NodeGUID: 0x2, InPort: 10, OutPort: 2}, {NodeGUID: 0x104, InPort: 1},
	}}
	unhealthy := &linkhealth.PathHealth{Links: []linkhealth.Link{
		{A: linkhealth.LinkEnd{NodeGUID: 0x101, Port: 1}, B: linkhealth.LinkEnd{NodeGUID: 0x1, Port: 1}, Verdict: linkhealth.LinkOK, Healthy: true},
		// written the other way round: the key is the same link
		{A: linkhealth.LinkEnd{NodeGUID: 0x12, Port: 1}, B: linkhealth.LinkEnd{NodeGUID: 0x1, Port: 11}, Verdict: linkhealth.LinkWidthDegraded},
		{A: linkhealth.LinkEnd{NodeGUID: 0x12, Port: 2}, B: linkhealth.LinkEnd{NodeGUID: 0x2, Port: 11}, Verdict: linkhealth.LinkUnknown, Healthy: true},
	}}
	for _, c := range []struct {
		name     string
		in       Trace
		previous []Link
		causes   []Cause
		suspects []Link
	}{
		{"good", Trace{Current: good, Previous: good, LatencyThreshold: time.Millisecond}, nil, nil, nil},
		{"slow", Trace{Current: slow, LatencyThreshold: time.Millisecond}, nil, []Cause{CauseLatency}, links(h1L1, L1S2, L2S2, h4L2)},
		{"slow, latency not judged", Trace{Current: slow}, nil, nil, nil},
		{"mismatch at the spine's far end", Trace{Current: mismatch}, nil, []Cause{CauseMismatch}, links(L2S2)},
		{"mismatch on the way to the spine, off the path", Trace{Current: mismatchOffPath}, nil, []Cause{CauseMismatch},
			links(h1L1, L1S2)},
		{"lost behind the leaf, and at the destination", Trace{Current: lost}, nil, []Cause{CauseLost}, links(h1L1, L1S2, L2S2, h4L2)},
		{"lost behind the leaf, the destination answered through it", Trace{Current: lostMidway}, nil, nil, nil},
		{"lost at the destination", Trace{Current: lostDestination}, nil, []Cause{CauseLost}, links(h1L1, L1S2, L2S2, h4L2)},
		{"failed past the spine", Trace{Current: failed, Previous: good}, links(h1L1, L1S2, L2S2, h4L2), []Cause{CauseFailed},
			links(L2S2)},
		{"destination's port down", Trace{Current: downCA, Previous: good}, nil, []Cause{CauseFailed}, links(h4L2)},
		{"no route at the spine: the link it used to take", Trace{Current: noRoute, Previous: good}, links(h1L1, L1S2, L2S2, h4L2),
			[]Cause{CauseFailed}, links(L2S2)},
		{"no route at the spine, not on the previous path", Trace{Current: noRoute, Previous: rerouted}, links(h1L1, L1S1, L2S1, h4L2),
			[]Cause{CauseFailed}, links(h1L1, L1S2)},
		{"failed at the source", Trace{Current: &trace.Result{Status: trace.StatusUnreachable, Reason: trace.ReasonPortDown,
			Hops: good.Hops[:1:1]}}, nil, nil, nil},
		{"failed, no previous path", Trace{Current: failedNoPrev}, nil, []Cause{CauseFailed}, links(h1L1, L1S2)},
		{"failed by the previous path's other port", Trace{Current: failed, Previous: rerouted},
			links(h1L1, L1S1, L2S1, h4L2), []Cause{CauseFailed}, links(h1L1, L1S2)},
		{"not the fabric's failure", Trace{Current: resolve, Previous: good}, links(h1L1, L1S2, L2S2, h4L2), nil, nil},
		{"rerouted and good", Trace{Current: rerouted, Previous: good}, links(h1L1, L1S2, L2S2, h4L2), nil, nil},
		{"unhealthy link", Trace{Current: good, Health: unhealthy}, nil, []Cause{CauseLink}, links(L1S2)},
		{"nothing yet", Trace{}, nil, nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := FromTrace(c.in)
			if want := PathLinks(c.in.Current); !sameLinks(p.Links, want) {
				t.Errorf("links %v, want %v", p.Links, want)
			}
			if !sameLinks(p.Previous, c.previous) {
				t.Errorf("previous %v, want %v", p.Previous, c.previous)
			}
			if p.Bad != (len(c.causes) > 0) || len(p.Causes) != len(c.causes) {
				t.Fatalf("bad %v causes %v, want %v", p.Bad, p.Causes, c.causes)
			}
			for i := range c.causes {
				if p.Causes[i] != c.causes[i] {
					t.Errorf("causes %v, want %v", p.Causes, c.causes)
				}
			}
			if !sameLinks(p.Suspects, c.suspects) {
				t.Errorf("suspects %v, want %v", p.Suspects, c.suspects)
			}
		})
	}
}
