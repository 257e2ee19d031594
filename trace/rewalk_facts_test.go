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
	auto := s.tracer("H0-0", Options{Discovery: DiscoveryAuto, NoValidate: true, NoRetry: true, Clock: newFakeClock(),
		ShareFacts: time.Hour, SupportTTL: time.Hour, SARecordTTL: Off})
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
