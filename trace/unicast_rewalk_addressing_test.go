package trace

import (
	"context"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// recordEverywhere puts a recorded agent (addressing_test.go) on every
// node of s and returns a function that gives every ibtracer-class
// request the agents received since, by node name.
func recordEverywhere(s *simFabric) func() map[string][]ibmad.Address {
	recs := map[string]*recorder{}
	for _, n := range s.f.Nodes() {
		recs[n.Name] = s.recordedAgent(n.Name)
	}
	mark := map[string]int{}
	return func() map[string][]ibmad.Address {
		got := map[string][]ibmad.Address{}
		for name, rec := range recs {
			a := rec.addrs()
			got[name] = a[mark[name]:]
			mark[name] = len(a)
		}
		return got
	}
}

// checkSL fails the test unless the trace reports SL sl from the
// PathRecord and the agents received validation MADs, every one on sl.
func checkSL(t *testing.T, r *Result, got map[string][]ibmad.Address, sl uint8) {
	t.Helper()
	if r.Addressing == nil || r.Addressing.SL != sl || r.Addressing.SLFrom != SLFromPathRecord {
		t.Fatalf("the trace reports addressing %+v, want SL %d from the PathRecord", r.Addressing, sl)
	}
	n := 0
	for name, addrs := range got {
		for _, a := range addrs {
			n++
			if a.SL != sl {
				t.Errorf("%s's agent got a validation MAD on SL %d; the trace reports SL %d", name, a.SL, sl)
			}
		}
	}
	if n == 0 {
		t.Fatal("no agent got a validation MAD: the test proves nothing")
	}
}

// TestSMPAfterSALimitKeepsTheAddressing: auto mode's SA walk meets the
// SA's limit and the destination is traced again by SMPs
// (smpAfterSALimit): the validation MADs of that walk go on the
// PathRecord's SL, the one the result reports.
func TestSMPAfterSALimitKeepsTheAddressing(t *testing.T) {
	s, behind := limitSim(t)
	since := recordEverywhere(s)
	const sl = 3
	guid := s.f.Node(behind[len(behind)-1]).Ports[1].GUID
	s.f.SetPathQoS(guid, sim.PathQoS{SL: sl})
	auto := s.tracer("H0-0", Options{Discovery: DiscoveryAuto, Validate: ValidateAgent, Clock: newFakeClock(),
		SupportTTL: time.Hour, SARecordTTL: new(time.Duration(0)), Retries: new(0)})
	ctx := context.Background()
	s.f.SetSMPFirewall(true) // auto falls back to the SA, and remembers
	if r := auto.Trace(ctx, Destination{LID: s.lid(behind[0])}); r.Status != StatusOK || auto.Mode() != DiscoverySA {
		t.Fatalf("behind the firewall: %s %v, mode %s", r.Status, r.Err, auto.Mode())
	}
	s.f.SetSMPFirewall(false)
	s.f.SetSARefusal(sim.SARefusal{LinkLIDMasked: true, NoTables: true})
	since()
	r := auto.Trace(ctx, Destination{GUID: guid})
	if r.Status != StatusOK || r.Discovery != DiscoverySMP || predicted(r) != r.PathHops() {
		t.Fatalf("at the SA's limit: %s %v (%s), %d of %d hops validated", r.Status, r.Err, r.Discovery, predicted(r), r.PathHops())
	}
	checkSL(t, r, since(), sl)
}

// TestSAFallbackKeepsTheAddressing: auto mode's SMPs refused at the first
// hop, the destination is traced again from the SA: that walk's
// validation MADs go on the PathRecord's SL.
func TestSAFallbackKeepsTheAddressing(t *testing.T) {
	s := loadSim(t, "fattree-mini.net", sim.Options{SMNode: "H1-2"}) // the tracer at H0-0 is not the SM
	since := recordEverywhere(s)
	const sl = 5
	guid := s.f.Node("H1-1").Ports[1].GUID
	s.f.SetPathQoS(guid, sim.PathQoS{SL: sl})
	s.f.SetSMPFirewall(true)
	auto := s.tracer("H0-0", Options{Discovery: DiscoveryAuto, Validate: ValidateAgent, Clock: newFakeClock(), SupportTTL: time.Minute})
	r := auto.Trace(context.Background(), Destination{GUID: guid})
	if r.Status != StatusOK || r.Discovery != DiscoverySA || auto.Fallbacks() != 1 || predicted(r) != r.PathHops() {
		t.Fatalf("auto behind the firewall: %s %v (%s), %d fallbacks, %d of %d hops validated", r.Status, r.Err, r.Discovery,
			auto.Fallbacks(), predicted(r), r.PathHops())
	}
	checkSL(t, r, since(), sl)
}

// TestMismatchRewalkKeepsTheAddressing: a trace that saw status 7 walks
// again (trace.go) before it reports the mismatch: the second walk's
// validation MADs go on the PathRecord's SL too.
func TestMismatchRewalkKeepsTheAddressing(t *testing.T) {
	s := loadSim(t, "fattree-mini.net", sim.Options{})
	since := recordEverywhere(s)
	const sl = 6
	guid := s.f.Node("H1-1").Ports[1].GUID
	s.f.SetPathQoS(guid, sim.PathQoS{SL: sl})
	tr := s.tracer("H0-0", Options{Validate: ValidateAgent, NoFastPath: true})
	ctx := context.Background()
	r := tr.Trace(ctx, Destination{GUID: guid})
	if r.Status != StatusOK {
		t.Fatalf("before the fault: %s %v", r.Status, r.Err)
	}
	spine := s.f.NodeByGUID(r.Hops[2].NodeGUID).Name
	s.divergeParallel(s.f.NodeByGUID(r.Hops[1].NodeGUID).Name, r.Hops[2])
	since()
	r = tr.Trace(ctx, Destination{GUID: guid})
	if r.Status != StatusMismatch {
		t.Fatalf("after the data plane diverged: %s %v", r.Status, r.Err)
	}
	got := since()
	if len(got[spine]) != 2 {
		t.Fatalf("the spine's agent got %d validation MADs, want 2 (the walk and the re-walk)", len(got[spine]))
	}
	checkSL(t, r, got, sl)
}
