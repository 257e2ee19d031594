package trace

import (
	"context"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// saLimitSharing is limitSim's fabric (the SA cannot name the links of
// L0, whose LID is not a multiple of 2^LMC) with an auto-mode tracer at
// H0-0 that shares SMP answers (Options.ShareFacts) and remembers SA
// mode: the tracer has traced H1-1 by SMPs (its facts are kept), then
// fell back to the SA behind an SMP firewall, which is off again. The
// SA now cannot answer (LinkRecords LMC-masked, no tables), so the next
// trace's SA walk meets its limit and H1-1 is traced again by SMPs
// (smpAfterSALimit), from the facts the first trace kept.
func saLimitSharing(t *testing.T) (*simFabric, *Tracer, Destination) {
	s, _ := limitSim(t)
	ctx := context.Background()
	auto := s.tracer("H0-0", Options{Discovery: DiscoveryAuto, Validate: ValidateOff, Retries: new(0), Clock: newFakeClock(),
		ShareFacts: time.Hour, SupportTTL: time.Hour, SARecordTTL: new(time.Duration(0))})
	d := Destination{LID: s.lid("H1-1")}
	if r := auto.Trace(ctx, d); r.Status != StatusOK || r.Discovery != DiscoverySMP {
		t.Fatalf("by SMPs: %s %v (%s)", r.Status, r.Err, r.Discovery)
	}
	s.f.SetSMPFirewall(true)
	if r := auto.Trace(ctx, d); r.Status != StatusOK || r.Discovery != DiscoverySA || auto.Mode() != DiscoverySA {
		t.Fatalf("behind the firewall: %s %v (%s), mode %s", r.Status, r.Err, r.Discovery, auto.Mode())
	}
	s.f.SetSMPFirewall(false)
	s.f.SetSARefusal(sim.SARefusal{LinkLIDMasked: true, NoTables: true})
	return s, auto, d
}

// TestSMPAfterSALimitCountsSharedFacts: the SMP walk after the SA's
// limit takes the facts the first trace kept, and the result counts
// them (Result.SharedFacts, the JSON's shared_facts and --all's "facts
// shared rather than asked"): as many as the tracer's store gave out
// during the trace.
func TestSMPAfterSALimitCountsSharedFacts(t *testing.T) {
	_, auto, d := saLimitSharing(t)
	before := auto.facts.shared.Load()
	r := auto.Trace(context.Background(), d)
	given := auto.facts.shared.Load() - before
	if r.Status != StatusOK || r.Discovery != DiscoverySMP {
		t.Fatalf("at the SA's limit: %s %v (%s)", r.Status, r.Err, r.Discovery)
	}
	if given == 0 {
		t.Fatal("the store gave no shared answer: the test proves nothing")
	}
	if int64(r.SharedFacts) != given {
		t.Fatalf("the result counts %d shared facts; the tracer's store gave the trace %d", r.SharedFacts, given)
	}
}

// TestSMPAfterSALimitRetracesAfresh: between two traces of a run the
// link L0-S1, on the kept path to H1-1, goes down and the SM routes
// around it (L0's forwarding entry for H1-1 changes to S0). The SMP
// walk after the SA's limit follows the kept, stale LFT block over the
// dead link and fails; since it relied on shared facts, the trace is
// done again reading every fact itself (reached.go, facts.go), and that
// trace's SMP walk after the SA's limit must read afresh too: it finds
// the new route, through S0, and succeeds.
func TestSMPAfterSALimitRetracesAfresh(t *testing.T) {
	s, auto, d := saLimitSharing(t)
	if err := s.f.SetLinkState("L0", 6, false, true); err != nil { // L0[6] is S1[1]
		t.Fatal(err)
	}
	r := auto.Trace(context.Background(), d)
	if r.Status != StatusOK || r.Discovery != DiscoverySMP {
		t.Fatalf("after L0-S1 went down and the SM rerouted: %s %s %v (%s), %d shared facts; want ok by SMPs read afresh",
			r.Status, r.Reason, r.Err, r.Discovery, r.SharedFacts)
	}
	if via := r.Hops[2].NodeDesc; via != "S0" {
		t.Fatalf("the path goes through %s, want S0 (the SM's new route)", via)
	}
	if r.SharedFacts == 0 {
		t.Fatal("the first walk took no shared fact: the test proves nothing")
	}
}

// TestSAFallbackCountsSharedFacts: the SA fallback's walk reads SA
// records, never an SMP fact, so what the result counts as shared is
// what the SMP walks took. Here the SMP walk takes the kept facts up to
// the destination, whose NodeInfo (a CA's, not kept) the firewall
// refuses; having relied on shared facts it is traced again afresh,
// refused at the first hop, and traced from the SA: the result counts
// exactly the answers the tracer's store gave out, and the fresh
// trace's SA walk none.
func TestSAFallbackCountsSharedFacts(t *testing.T) {
	s := loadSim(t, "fattree-mini.net", sim.Options{SMNode: "H1-2"}) // the tracer at H0-0 is not the SM
	auto := s.tracer("H0-0", Options{Discovery: DiscoveryAuto, Validate: ValidateOff, Retries: new(0), Clock: newFakeClock(),
		ShareFacts: time.Hour, SupportTTL: time.Hour})
	ctx := context.Background()
	d := Destination{LID: s.lid("H1-1")}
	if r := auto.Trace(ctx, d); r.Status != StatusOK || r.Discovery != DiscoverySMP {
		t.Fatalf("by SMPs: %s %v (%s)", r.Status, r.Err, r.Discovery)
	}
	s.f.SetSMPFirewall(true)
	before := auto.facts.shared.Load()
	r := auto.Trace(ctx, d)
	given := auto.facts.shared.Load() - before
	if r.Status != StatusOK || r.Discovery != DiscoverySA || auto.Fallbacks() != 1 {
		t.Fatalf("behind the firewall: %s %v (%s), %d fallbacks", r.Status, r.Err, r.Discovery, auto.Fallbacks())
	}
	if given == 0 {
		t.Fatal("the store gave no shared answer: the test proves nothing")
	}
	if int64(r.SharedFacts) != given {
		t.Fatalf("the result counts %d shared facts; the tracer's store gave the trace %d", r.SharedFacts, given)
	}
}
