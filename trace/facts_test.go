package trace

import (
	"context"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// TestFactInFlightIsAskedOnce: a second trace that needs a fact while the
// first's question is in flight waits for that answer instead of asking
// again, and counts it as shared; after ttl on the tracer's clock the
// fact is asked again.
func TestFactInFlightIsAskedOnce(t *testing.T) {
	clock := newFakeClock()
	f := newFacts(Options{ShareFacts: time.Minute, Clock: clock})
	k := pathFact(ibmad.DRPath{1, 3}, ibmad.AttrNodeInfo, 0)
	started, release := make(chan struct{}), make(chan struct{})
	want := answer{rtt: time.Millisecond}
	want.data[0] = 7
	first := make(chan answer)
	go func() {
		resp, _, _ := f.get(context.Background(), k, func() (answer, error) {
			close(started)
			<-release
			return want, nil
		})
		first <- resp
	}()
	<-started // the question is in flight: registered before it was asked
	second := make(chan bool)
	go func() {
		resp, shared, err := f.get(context.Background(), k, func() (answer, error) {
			t.Error("the fact in flight was asked again")
			return answer{}, nil
		})
		second <- shared && err == nil && resp == want
	}()
	close(release)
	if got := <-first; got != want {
		t.Fatalf("the first trace got %v", got)
	}
	if !<-second {
		t.Fatal("the second trace did not get the first one's answer as shared")
	}
	if f.asked.Load() != 1 || f.shared.Load() != 1 {
		t.Fatalf("asked %d, shared %d; want 1 and 1", f.asked.Load(), f.shared.Load())
	}
	clock.Add(time.Minute)
	asked := false
	if _, shared, _ := f.get(context.Background(), k, func() (answer, error) { asked = true; return want, nil }); shared || !asked {
		t.Fatalf("after ttl: shared %v, asked %v; want asked again", shared, asked)
	}
}

// pathOf is a trace's node GUIDs, in order.
func pathOf(r *Result) []ibmad.GUID {
	var out []ibmad.GUID
	for _, h := range r.Hops {
		out = append(out, h.NodeGUID)
	}
	return out
}

// TestSharedFactsNeverHideALinkDown: a trace that walks on facts another
// trace read before a link went down (and the SM routed around it) fails
// on them, and is traced again reading every fact itself: it reports the
// new path, the one a tracer that shares nothing finds, not a failure.
func TestSharedFactsNeverHideALinkDown(t *testing.T) {
	topo, err := sim.FatTree2(4, 2, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	s := newSim(t, topo, sim.Options{})
	o := Options{Validate: ValidateOff, Retries: new(0), Timeout: 50 * time.Millisecond}
	so := o
	so.ShareFacts = time.Hour
	shared, alone := s.tracer("H0-0", so), s.tracer("H0-0", o)
	ctx := context.Background()
	a := shared.Trace(ctx, Destination{LID: s.lid("H3-0")})
	if a.Status != StatusOK || len(a.Hops) != 5 {
		t.Fatalf("H3-0: %s %v, %d hops", a.Status, a.Err, len(a.Hops))
	}
	spine, leaf := a.Hops[2], a.Hops[3]
	// Another host of that leaf whose path crosses the same spine.
	var b uint16
	for i := 1; i < 4 && b == 0; i++ {
		lid := s.lid("H3-" + string(rune('0'+i)))
		if r := alone.Trace(ctx, Destination{LID: lid}); r.Status == StatusOK && r.Hops[2].NodeGUID == spine.NodeGUID {
			b = lid
		}
	}
	if b == 0 {
		t.Fatalf("no other host of %s is routed through %s", leaf.NodeDesc, spine.NodeDesc)
	}
	if err := s.f.SetLinkState(spine.NodeDesc, int(a.Hops[2].OutPort), false, true); err != nil {
		t.Fatal(err)
	}
	r := shared.Trace(ctx, Destination{LID: b})
	want := alone.Trace(ctx, Destination{LID: b})
	if want.Status != StatusOK {
		t.Fatalf("the tracer that shares nothing: %s %v", want.Status, want.Err)
	}
	if r.Status != StatusOK || fmtGUIDs(pathOf(r)) != fmtGUIDs(pathOf(want)) || r.SharedFacts == 0 {
		t.Fatalf("after the link went down: %s %v, path %v, %d shared facts; want ok on %v, having relied on shared facts first",
			r.Status, r.Err, pathOf(r), r.SharedFacts, pathOf(want))
	}
	if r.Hops[2].NodeGUID == spine.NodeGUID {
		t.Fatalf("the path still crosses %s, whose link to %s is down", spine.NodeDesc, leaf.NodeDesc)
	}
}

func fmtGUIDs(gs []ibmad.GUID) string {
	s := ""
	for _, g := range gs {
		s += g.String() + " "
	}
	return s
}

// TestFactsAreSweptEveryTTL: the store keeps the facts of one ttl, not
// every fact it ever read: once a ttl has passed, keeping a new answer
// drops those no longer live (an exporter sharing for one interval holds
// one interval's facts), and a live one is still given.
func TestFactsAreSweptEveryTTL(t *testing.T) {
	clock := newFakeClock()
	f := newFacts(Options{ShareFacts: 10 * time.Second, Clock: clock})
	ask := func() (answer, error) { return answer{rtt: time.Microsecond}, nil }
	ctx := context.Background()
	for i := 0; i < 100; i++ {
		f.get(ctx, nodeFact(ibmad.GUID(i+1), ibmad.AttrLinearForwardingTable, 0), ask)
	}
	if n := f.size(); n != 100 {
		t.Fatalf("%d facts kept, want 100", n)
	}
	clock.Add(6 * time.Second)
	late := nodeFact(1000, ibmad.AttrLinearForwardingTable, 0)
	f.get(ctx, late, ask)
	clock.Add(5 * time.Second) // the first 100 are 11 s old, late 5 s
	f.get(ctx, nodeFact(1001, ibmad.AttrLinearForwardingTable, 0), ask)
	if n := f.size(); n != 2 {
		t.Fatalf("%d facts kept after the first 100 expired, want 2 (the live ones)", n)
	}
	if _, shared, _ := f.get(ctx, late, func() (answer, error) { t.Error("a live fact was asked again"); return answer{}, nil }); !shared {
		t.Fatal("a live fact was not shared")
	}
}

// nodeInfoAnswer is an answer holding a NodeInfo of type typ.
func nodeInfoAnswer(t *testing.T, typ ibmad.NodeType) answer {
	ni := ibmad.NodeInfo{NodeType: typ, NodeGUID: 0x42, NumPorts: 1}
	b, err := ni.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var a answer
	copy(a.data[:], b)
	return a
}

// TestFactsKeptAreThoseOthersNeed: the store keeps what other traces
// need (a switch's NodeInfo and PortInfo, the local node's NodeInfo, LFT
// blocks) and not what only one trace needs or another cache keeps (a
// remote CA's NodeInfo and PortInfo, descriptions, SwitchInfo): those are
// shared only while in flight.
func TestFactsKeptAreThoseOthersNeed(t *testing.T) {
	f := newFacts(Options{ShareFacts: time.Minute, Clock: newFakeClock()})
	ctx := context.Background()
	sw, ca := ibmad.DRPath{1, 2}, ibmad.DRPath{1, 2, 3}
	for _, q := range []struct {
		k factKey
		a answer
	}{
		{pathFact(ibmad.DRPath{}, ibmad.AttrNodeInfo, 0), nodeInfoAnswer(t, ibmad.NodeTypeCA)},
		{pathFact(sw, ibmad.AttrNodeInfo, 0), nodeInfoAnswer(t, ibmad.NodeTypeSwitch)},
		{pathFact(sw, ibmad.AttrPortInfo, 0), answer{}},
		{pathFact(ca, ibmad.AttrNodeInfo, 0), nodeInfoAnswer(t, ibmad.NodeTypeCA)},
		{pathFact(ca, ibmad.AttrPortInfo, 0), answer{}},
		{nodeFact(0x42, ibmad.AttrNodeDescription, 0), answer{}},
		{nodeFact(0x42, ibmad.AttrSwitchInfo, 0), answer{}},
		{nodeFact(0x42, ibmad.AttrLinearForwardingTable, 3), answer{}},
	} {
		f.get(ctx, q.k, func() (answer, error) { return q.a, nil })
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for k := range f.m {
		t.Logf("kept %q %v %d", k.path, k.attr, k.mod)
	}
	for _, k := range []factKey{pathFact(ibmad.DRPath{}, ibmad.AttrNodeInfo, 0), pathFact(sw, ibmad.AttrNodeInfo, 0),
		pathFact(sw, ibmad.AttrPortInfo, 0), nodeFact(0x42, ibmad.AttrLinearForwardingTable, 3)} {
		if _, ok := f.m[k]; !ok {
			t.Errorf("not kept: %q %v", k.path, k.attr)
		}
	}
	if len(f.m) != 4 {
		t.Fatalf("%d facts kept, want the 4 other traces need", len(f.m))
	}
}

// size is the number of answers kept.
func (f *facts) size() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.m)
}
