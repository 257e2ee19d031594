package trace

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// What the multicast error blames (multicast_explain.go), on the
// in-process simulator's MFTs only (sim.Fabric.SetMulticastGroup): the
// tree of group 0xc001 of H0-0 and H1-1 on fattree-mini is L0 ports
// [1 4], S0 [1 3], L1 [2 4], and the unicast route H0-0 to H1-1 is
// L0 port 4, S0 port 3, L1 port 2. Stock ibtracert -m names no switch,
// so no independent peer checks the words; the MFT paths themselves are
// checked against ibtracert -m on ibsim (cmd/ibtracer/multicast_ibsim_test.go).

const explainMLID = 0xc001

// atExplain is a transport that calls hook once, when the tracer sends
// the first directed-route NodeInfo of the local node (0 hops) after it
// read an MFT block: the unicast walk that explain starts after the
// multicast search failed. A fault changed there is one that changed
// between the search and the explanation (a flapping link).
type atExplain struct {
	ibmad.Transport
	mu      sync.Mutex
	sawMFT  bool
	hook    func()
	trigged bool
}

func (a *atExplain) Send(p *ibmad.Packet) error {
	a.mu.Lock()
	if p.MAD.IsDirectedRoute() {
		switch {
		case p.MAD.AttrID() == ibmad.AttrMulticastForwardingTable:
			a.sawMFT = true
		case p.MAD.AttrID() == ibmad.AttrNodeInfo && p.MAD.DRHopCount() == 0 && a.sawMFT && !a.trigged:
			a.trigged = true
			a.hook()
		}
	}
	a.mu.Unlock()
	return a.Transport.Send(p)
}

// explainSim is fattree-mini with group 0xc001 of H0-0 and H1-1 and a
// tracer on H0-0 whose transport calls hook (if not nil) at the start
// of the explanation.
func explainSim(t *testing.T, hook func(f *sim.Fabric)) (*simFabric, *Tracer, *atExplain) {
	t.Helper()
	s := loadSim(t, "fattree-mini.net", sim.Options{})
	if err := s.f.SetMulticastGroup(explainMLID, "H0-0", "H1-1"); err != nil {
		t.Fatal(err)
	}
	tp, err := s.f.Attach("H0-0", 0)
	if err != nil {
		t.Fatal(err)
	}
	a := &atExplain{Transport: tp, hook: func() {}}
	if hook != nil {
		a.hook = func() { hook(s.f) }
	}
	e := ibmad.NewEngine(a, ibmad.Options{Timeout: 100 * time.Millisecond, Retries: 1})
	t.Cleanup(func() { e.Close() })
	return s, New(e, Options{Timeout: 100 * time.Millisecond}), a
}

func mcTrace(t *testing.T, s *simFabric, tr *Tracer, dst string) *Result {
	t.Helper()
	r := tr.TraceMulticast(context.Background(), explainMLID, 0, s.lid(dst))
	if r.Status != StatusUnreachable || r.Reason != ReasonNoRoute || r.Err == nil {
		t.Fatalf("to %s: %s/%s %v, want unreachable/no_route", dst, r.Status, r.Reason, r.Err)
	}
	return r
}

func mustErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestMulticastExplainMFTLacksPort: H1-2 is not a member: L1's entry
// selects ports [2 4], not port 3 toward H1-2: the MFT entry is what is
// wrong, and the error says so (the case the explanation was made for),
// and no more: the tree is whole.
func TestMulticastExplainMFTLacksPort(t *testing.T) {
	s, tr, _ := explainSim(t, nil)
	r := mcTrace(t, s, tr, "H1-2")
	msg := r.Err.Error()
	if last := r.Hops[len(r.Hops)-1]; last.NodeDesc != "L1" ||
		!strings.Contains(msg, `"L1"`) || !strings.Contains(msg, "selects ports [2 4], not port 3, which leads to LID") ||
		strings.Contains(msg, "cut") {
		t.Fatalf("path %s, error %q; want L1 blamed for lacking port 3", namedSignature(s.f, r), msg)
	}
}

// TestMulticastExplainLinkDownAtTheSearch: S0 port 3, the tree's link to
// L1 and the unicast route's, is down while the multicast search reads
// it and up again when the unicast route is walked (a flapping link).
// S0's MFT entry does include port 3: the error must say the link was
// down, not that the entry lacks the port.
func TestMulticastExplainLinkDownAtTheSearch(t *testing.T) {
	s, tr, a := explainSim(t, func(f *sim.Fabric) { mustErr(t, f.SetLinkState("S0", 3, true, false)) })
	mustErr(t, s.f.SetLinkState("S0", 3, false, false))
	r := mcTrace(t, s, tr, "H1-1")
	msg := r.Err.Error()
	if !a.trigged {
		t.Fatalf("the explanation walked no unicast route: %q", msg)
	}
	if strings.Contains(msg, "not port 3") || !strings.Contains(msg, `"S0"`) || !strings.Contains(msg, "port 3") || !strings.Contains(msg, "down") {
		t.Fatalf("error %q; want S0's port 3 named as down, not missing from its MFT entry", msg)
	}
	if last := r.Hops[len(r.Hops)-1]; last.NodeDesc != "S0" {
		t.Fatalf("path %s, want the path to S0", namedSignature(s.f, r))
	}
}

// TestMulticastExplainNoAnswerAtTheSearch: L1, behind S0's port 3, does
// not answer while the multicast search steps there and answers when
// the unicast route is walked. S0's entry includes port 3: the error
// must say the node behind it did not answer.
func TestMulticastExplainNoAnswerAtTheSearch(t *testing.T) {
	s, tr, a := explainSim(t, func(f *sim.Fabric) { mustErr(t, f.SetSilent("L1", false)) })
	mustErr(t, s.f.SetSilent("L1", true))
	r := mcTrace(t, s, tr, "H1-1")
	msg := r.Err.Error()
	if !a.trigged {
		t.Fatalf("the explanation walked no unicast route: %q", msg)
	}
	if strings.Contains(msg, "not port 3") || !strings.Contains(msg, `"S0"`) || !strings.Contains(msg, "port 3") || !strings.Contains(msg, "did not answer") {
		t.Fatalf("error %q; want the node behind S0's port 3 named as not answering, not port 3 missing from its MFT entry", msg)
	}
}

// TestMulticastExplainSilentNode: L1 does not answer at all, so the
// unicast route cannot be walked either: the error must name S0 and the
// node behind its port 3 that did not answer, with the path to S0, not
// say the tables lead nowhere from the source.
func TestMulticastExplainSilentNode(t *testing.T) {
	s, tr, _ := explainSim(t, nil)
	mustErr(t, s.f.SetSilent("L1", true))
	r := mcTrace(t, s, tr, "H1-1")
	msg := r.Err.Error()
	if strings.Contains(msg, "lead nowhere") || !strings.Contains(msg, `"S0"`) || !strings.Contains(msg, "port 3") || !strings.Contains(msg, "did not answer") {
		t.Fatalf("error %q; want the node behind S0's port 3 named as not answering", msg)
	}
	if last := r.Hops[len(r.Hops)-1]; last.NodeDesc != "S0" {
		t.Fatalf("path %s, want the path to S0", namedSignature(s.f, r))
	}
}

// TestMulticastExplainTreeOverDownLink: S0 port 3 goes down and the SM
// reroutes the unicast LIDs (over S0 port 4) but not the group's tree.
// S0's entry indeed lacks port 4, and the error says so; it must also
// say that port 3 of that entry, the tree's branch, is down: that is
// what broke the group.
func TestMulticastExplainTreeOverDownLink(t *testing.T) {
	s, tr, _ := explainSim(t, nil)
	mustErr(t, s.f.SetLinkState("S0", 3, false, true))
	r := mcTrace(t, s, tr, "H1-1")
	msg := r.Err.Error()
	if !strings.Contains(msg, `"S0"`) || !strings.Contains(msg, "selects ports [1 3], not port 4") || !strings.Contains(msg, "port 3") ||
		!strings.Contains(msg, "down") {
		t.Fatalf("error %q; want S0 lacking port 4 and its port 3 down", msg)
	}
}

// TestMulticastExplainCutElsewhere: both links of S0 to L1 go down and
// the SM reroutes the unicast LIDs over S1, not the group's tree. The
// last switch of the tree on the unicast route is L0, whose entry
// indeed lacks port 6 toward S1; the tree was cut at S0, off that
// route, and the error must say so too.
func TestMulticastExplainCutElsewhere(t *testing.T) {
	s, tr, _ := explainSim(t, nil)
	mustErr(t, s.f.SetLinkState("S0", 3, false, false))
	mustErr(t, s.f.SetLinkState("S0", 4, false, true))
	r := mcTrace(t, s, tr, "H1-1")
	msg := r.Err.Error()
	if !strings.Contains(msg, `"L0"`) || !strings.Contains(msg, "selects ports [1 4], not port ") ||
		!strings.Contains(msg, `"S0"`) || !strings.Contains(msg, "port 3's link was down") {
		t.Fatalf("error %q; want L0 lacking the unicast port and S0's port 3 down", msg)
	}
}
