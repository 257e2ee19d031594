package trace

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// limitSim is the 4x2x4 fat tree at LMC 2, the SM on H3-3: the
// leaves' port-0 LIDs are not all multiples of 4. It returns the CAs
// other than H0-0 whose path from H0-0 leaves an unaligned switch by a
// link (H0-0's SA walk asks that switch's LinkRecord by its LID).
func limitSim(t *testing.T) (*simFabric, []string) {
	s := loadSim(t, "fattree-4x2x4.net", sim.Options{LMC: 2, SMNode: "H3-3"})
	smp := s.tracer("H0-0", Options{Discovery: DiscoverySMP, Validate: ValidateOff})
	var behind []string
	for _, n := range s.f.Nodes() {
		if n.Type.String() != "ca" || n.Name == "H0-0" {
			continue
		}
		r := smp.Trace(context.Background(), Destination{LID: s.lid(n.Name)})
		if r.Status != StatusOK {
			t.Fatalf("SMP trace to %s: %s %v", n.Name, r.Status, r.Err)
		}
		for _, h := range r.Hops[1 : len(r.Hops)-1] {
			if h.LID%4 != 0 {
				behind = append(behind, n.Name)
				break
			}
		}
	}
	if len(behind) == 0 {
		t.Fatal("no path crosses a switch whose LID is not a multiple of 2^LMC: the test proves nothing")
	}
	return s, behind
}

// TestSAModeThroughUnalignedSwitches: an SA that matches LinkRecord LIDs
// against LMC-masked LIDs, as OpenSM does, still answers the table of
// every node's port N (salinks.go): SA mode traces every CA, SMP-free.
func TestSAModeThroughUnalignedSwitches(t *testing.T) {
	s, behind := limitSim(t)
	s.f.SetSARefusal(sim.SARefusal{LinkLIDMasked: true})
	sa := s.tracer("H0-0", Options{Discovery: DiscoverySA, Validate: ValidateOff})
	for _, n := range behind {
		if r := sa.Trace(context.Background(), Destination{LID: s.lid(n)}); r.Status != StatusOK || r.Discovery != DiscoverySA {
			t.Fatalf("%s: %s %v (%s)", n, r.Status, r.Err, r.Discovery)
		}
	}
	if n := smpsSent(sa.Engine()); n != 0 {
		t.Fatalf("SA mode sent %d SMPs", n)
	}
}

// TestSALimitFailsSAModeWithTheReason: when the SA matches LinkRecord
// LIDs LMC-masked and refuses tables too, it truly cannot name the link
// leaving an unaligned switch: --discovery=sa fails, and says that the
// SA cannot answer and why, not that the record does not exist.
func TestSALimitFailsSAModeWithTheReason(t *testing.T) {
	s, behind := limitSim(t)
	s.f.SetSARefusal(sim.SARefusal{LinkLIDMasked: true, NoTables: true})
	sa := s.tracer("H0-0", Options{Discovery: DiscoverySA, Validate: ValidateOff})
	r := sa.Trace(context.Background(), Destination{LID: s.lid(behind[0])})
	msg := ""
	if r.Err != nil {
		msg = r.Err.Error()
	}
	if r.Status != StatusUnreachable || r.Reason != ReasonSA || !isSALimit(r.Err) || strings.Contains(msg, "no such record") ||
		!strings.Contains(msg, "the SA cannot answer") || !strings.Contains(msg, "not a multiple of 2^LMC") || !strings.Contains(msg, "method not supported") {
		t.Fatalf("SA mode to %s: %s %s %q, want the SA's limitation named", behind[0], r.Status, r.Reason, msg)
	}
	if n := smpsSent(sa.Engine()); n != 0 {
		t.Fatalf("SA mode sent %d SMPs", n)
	}
	t.Logf("%s", msg)
}

// TestAutoFallsBackToSMPsAtTheSALimit: auto mode that traces from the SA
// (its SMPs were refused, and it remembers) and meets a question the SA
// cannot answer traces with SMPs instead: the trace succeeds by SMPs, and
// auto goes back to SMPs. When the SMPs are refused as well, the trace
// fails naming both.
func TestAutoFallsBackToSMPsAtTheSALimit(t *testing.T) {
	s, behind := limitSim(t)
	clk := newFakeClock()
	auto := s.tracer("H0-0", Options{Discovery: DiscoveryAuto, Validate: ValidateOff, Clock: clk, SupportTTL: time.Hour, SARecordTTL: new(time.Duration(0))}) // every record asked: none answered before the SA was limited
	ctx := context.Background()
	// SMPs refused: auto falls back to the SA, which answers, and
	// remembers.
	s.f.SetSMPFirewall(true)
	if r := auto.Trace(ctx, Destination{LID: s.lid(behind[0])}); r.Status != StatusOK || r.Discovery != DiscoverySA || auto.Mode() != DiscoverySA {
		t.Fatalf("behind the firewall: %s %v (%s), mode %s", r.Status, r.Err, r.Discovery, auto.Mode())
	}
	// Both refused: the trace fails, naming the SA's limit and the SMPs'.
	s.f.SetSARefusal(sim.SARefusal{LinkLIDMasked: true, NoTables: true})
	r := auto.Trace(ctx, Destination{LID: s.lid(behind[len(behind)-1])})
	if r.Status == StatusOK || r.Err == nil || !strings.Contains(r.Err.Error(), "the SA cannot answer") || !strings.Contains(r.Err.Error(), "SMPs") {
		t.Fatalf("SA limited and SMPs refused: %s %v", r.Status, r.Err)
	}
	// The firewall goes, the SA stays limited: auto, still in SA mode,
	// meets the limit and traces with SMPs.
	s.f.SetSMPFirewall(false)
	before := smpsSent(auto.Engine())
	for _, n := range behind {
		r := auto.Trace(ctx, Destination{LID: s.lid(n)})
		if r.Status != StatusOK || r.Discovery != DiscoverySMP {
			t.Fatalf("%s at the SA's limit: %s %v (%s)", n, r.Status, r.Err, r.Discovery)
		}
	}
	if smpsSent(auto.Engine()) == before || auto.Mode() != DiscoverySMP {
		t.Fatalf("after the SA's limit: %d SMPs sent, mode %s", smpsSent(auto.Engine())-before, auto.Mode())
	}
}
