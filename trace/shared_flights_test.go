package trace

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// TestVerdictInFlightIsAskedOnce: with ShareValidation, a trace that
// needs a hop's verdict while another trace's question for it is in
// flight waits for that answer instead of asking the agent again (32
// concurrent traces crossing one leaf ask it once), and takes it; when
// that answer is not one to share (lost), the waiter asks itself.
func TestVerdictInFlightIsAskedOnce(t *testing.T) {
	tr := New(nil, Options{ShareValidation: time.Minute, Clock: newFakeClock()})
	waiting := make(chan struct{}, 1)
	tr.val.verdictFlights.waiting = func() { waiting <- struct{}{} }
	ctx := context.Background()
	first, second := newWalk(tr, ctx, ibmad.PortAttributes{}, 100), newWalk(tr, ctx, ibmad.PortAttributes{}, 101)
	key := verdictKey{guid: 0x10, lid: 5, inPort: "\x01", by: ByAgent}
	h1 := Hop{NodeGUID: 0x10}
	if tr.val.sharedVerdict(first, &h1, key) {
		t.Fatal("a verdict nobody asked for was shared")
	}
	got := make(chan Hop)
	go func() {
		h2 := Hop{NodeGUID: 0x10}
		if !tr.val.sharedVerdict(second, &h2, key) {
			h2.Agent = "asked again"
		}
		got <- h2
	}()
	<-waiting // the second trace waits for the first one's question
	h1.Agent, h1.ActualInPort = AgentValidated, 1
	tr.val.shareVerdict(first, &h1, key)
	if h2 := <-got; h2.Agent != AgentValidated || h2.ActualInPort != 1 {
		t.Fatalf("the trace that needed the verdict in flight got %q (port %d), want the first trace's validated (1)", h2.Agent, h2.ActualInPort)
	}

	// A lost answer is not shared: the one that waited asks itself.
	key.lid = 6
	if tr.val.sharedVerdict(first, &h1, key) {
		t.Fatal("a verdict nobody asked for was shared")
	}
	waited := make(chan bool)
	go func() {
		h2 := Hop{NodeGUID: 0x10}
		waited <- tr.val.sharedVerdict(second, &h2, key)
	}()
	<-waiting
	h1.Agent = AgentLost
	tr.val.shareVerdict(first, &h1, key)
	if <-waited {
		t.Fatal("a lost verdict was shared")
	}
}

// vendorMADs is the requests e sent in the ibtracer vendor class.
func vendorMADs(e *ibmad.Engine) uint64 {
	for _, c := range e.Stats().Classes {
		if c.Class == ibmad.ClassIBTracer {
			return c.Requests
		}
	}
	return 0
}

// TestConcurrentTracesAskEachAgentOnce: every CA of a fat tree traced at
// once, agents everywhere, validation shared (as the exporter does): each
// node's agent is asked ClassPortInfo once, and SourceRoute once per
// (node, LID asked), whatever the concurrency, plus once per destination
// for its own DLID (never shared). Counted from the engine's vendor-class
// requests; the sim drops nothing, so any excess is a repeated question.
func TestConcurrentTracesAskEachAgentOnce(t *testing.T) {
	topo, err := sim.FatTree2(16, 8, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	s := newSim(t, topo, sim.Options{})
	s.agentsEverywhere()
	tr := s.tracer("H0-0", Options{ShareValidation: time.Hour, ShareFacts: time.Hour, Clock: newFakeClock(), NoFastPath: true,
		Timeout: 10 * time.Second}) // no MAD times out under load: the count is exact
	src := s.lid("H0-0")
	var lids []uint16
	for _, l := range s.f.CALIDs() {
		if l != src {
			lids = append(lids, l)
		}
	}
	rs := make([]*Result, len(lids))
	var wg sync.WaitGroup
	for i, l := range lids {
		wg.Add(1)
		go func() { defer wg.Done(); rs[i] = tr.Trace(context.Background(), Destination{LID: l}) }()
	}
	wg.Wait()
	nodes, asked := map[ibmad.GUID]bool{}, map[[2]uint64]bool{}
	for _, r := range rs {
		if r.Status != StatusOK {
			t.Fatalf("LID %d: %s %v", r.DLID, r.Status, r.Err)
		}
		for i, h := range r.Hops[1:] {
			if !h.Agent.AsPredicted() {
				t.Fatalf("LID %d hop %d: %s", r.DLID, i+1, h.Agent)
			}
			nodes[h.NodeGUID] = true
			if i+1 < len(r.Hops)-1 {
				asked[[2]uint64{uint64(h.NodeGUID), uint64(h.LID)}] = true
			}
		}
	}
	want := uint64(len(nodes) + len(asked) + len(rs))
	if got := vendorMADs(tr.Engine()); got != want {
		t.Fatalf("%d concurrent traces sent %d vendor MADs; want %d: ClassPortInfo to %d nodes, SourceRoute for %d (node, LID) pairs and %d destinations",
			len(rs), got, want, len(nodes), len(asked), len(rs))
	}
}
