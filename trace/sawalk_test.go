package trace

import (
	"context"
	"encoding/binary"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

func smpsSent(e *ibmad.Engine) uint64 {
	var n uint64
	for _, c := range e.Stats().Classes {
		if c.Class == ibmad.ClassSubnDR || c.Class == ibmad.ClassSubnLID {
			n += c.Requests
		}
	}
	return n
}

// TestSAModeValidatesLikeSMPMode: on a fat tree with agents everywhere,
// an SA-mode trace finds the SMP walk's path with the same verdicts
// (the expected ingress ports come from SA records too), sends no SMP,
// and the second destination behind the same switches asks the SA for
// fewer records than the first (records are shared).
func TestSAModeValidatesLikeSMPMode(t *testing.T) {
	s := loadSim(t, "fattree-mini.net", sim.Options{LMC: 1})
	s.agentsEverywhere()
	sa := s.tracer("H0-0", Options{Discovery: DiscoverySA})
	smp := s.tracer("H0-0", Options{Discovery: DiscoverySMP})
	ctx := context.Background()
	var reqs []int
	for _, dst := range []string{"H1-0", "H1-1", "H0-2", "L1", "S0"} {
		lid := s.lid(dst)
		a := sa.Trace(ctx, Destination{LID: lid})
		b := smp.Trace(ctx, Destination{LID: lid})
		if a.Status != StatusOK || b.Status != StatusOK || a.Discovery != DiscoverySA || b.Discovery != DiscoverySMP {
			t.Fatalf("%s: SA %s %v (%s), SMP %s %v (%s)", dst, a.Status, a.Err, a.Discovery, b.Status, b.Err, b.Discovery)
		}
		if a.Signature() != b.Signature() {
			t.Fatalf("%s: SA path %s, SMP path %s", dst, a.Signature(), b.Signature())
		}
		for i := range a.Hops {
			ha, hb := a.Hops[i], b.Hops[i]
			if ha.Agent != hb.Agent || ha.ExpectedInPort != hb.ExpectedInPort || ha.LID != hb.LID || ha.LMC != hb.LMC || ha.NodeDesc != hb.NodeDesc {
				t.Fatalf("%s hop %d: SA %+v, SMP %+v", dst, i, ha, hb)
			}
		}
		if a.Count(AgentValidated) == 0 {
			t.Fatalf("%s: no hop validated in SA mode", dst)
		}
		reqs = append(reqs, a.SARequests)
	}
	if n := smpsSent(sa.Engine()); n != 0 {
		t.Fatalf("the SA-mode tracer sent %d SMPs", n)
	}
	if smpsSent(smp.Engine()) == 0 {
		t.Fatal("the SMP-mode tracer sent no SMP: the counter proves nothing")
	}
	if reqs[1] >= reqs[0] || reqs[0] == 0 {
		t.Fatalf("SA requests per trace %v: the second destination behind the same leaf should reuse records", reqs)
	}
	t.Logf("SA record requests per trace: %v; by record: %v", reqs, sa.SARequests())
}

// TestAutoFallsBackBehindAnSMPFirewall: when only the SM may send SMPs,
// auto mode finds its SMPs unanswered at the first hop, traces from the
// SA instead, says so, and the next trace goes to the SA at once (no SMP)
// until SupportTTL, after which SMPs are tried again. smp mode just fails.
func TestAutoFallsBackBehindAnSMPFirewall(t *testing.T) {
	s := loadSim(t, "fattree-mini.net", sim.Options{SMNode: "H1-2"}) // the tracer at H0-0 is not the SM
	s.agentsEverywhere()
	s.f.SetSMPFirewall(true)
	clk := newFakeClock()
	auto := s.tracer("H0-0", Options{Discovery: DiscoveryAuto, Clock: clk, SupportTTL: time.Minute})
	ctx := context.Background()
	lid := s.lid("H1-1")
	r := auto.Trace(ctx, Destination{LID: lid})
	if r.Status != StatusOK || r.Discovery != DiscoverySA || auto.Fallbacks() != 1 || auto.Mode() != DiscoverySA {
		t.Fatalf("auto behind the firewall: %s %v, discovery %s, %d fallbacks, mode %s", r.Status, r.Err, r.Discovery, auto.Fallbacks(), auto.Mode())
	}
	if r.JSON().Discovery != "sa" {
		t.Fatalf("JSON discovery %q", r.JSON().Discovery)
	}
	before := smpsSent(auto.Engine())
	r2 := auto.Trace(ctx, Destination{LID: s.lid("H1-0")})
	if r2.Status != StatusOK || r2.Discovery != DiscoverySA || smpsSent(auto.Engine()) != before || auto.Fallbacks() != 1 {
		t.Fatalf("second trace: %s %v %s, %d more SMPs, %d fallbacks", r2.Status, r2.Err, r2.Discovery, smpsSent(auto.Engine())-before, auto.Fallbacks())
	}
	// The firewall goes; after SupportTTL, auto tries SMPs again.
	s.f.SetSMPFirewall(false)
	clk.Add(2 * time.Minute)
	if auto.Mode() != DiscoverySMP {
		t.Fatal("auto still in SA mode after SupportTTL")
	}
	r3 := auto.Trace(ctx, Destination{LID: lid})
	if r3.Status != StatusOK || r3.Discovery != DiscoverySMP {
		t.Fatalf("after the firewall: %s %v %s", r3.Status, r3.Err, r3.Discovery)
	}
	// smp mode behind the firewall: a timeout at the first hop, no fallback.
	s.f.SetSMPFirewall(true)
	smp := s.tracer("H0-0", Options{Discovery: DiscoverySMP, Retries: new(0)})
	r4 := smp.Trace(ctx, Destination{LID: lid})
	if r4.Status != StatusUnreachable || r4.Reason != ReasonTimeout || r4.Discovery != DiscoverySMP || smp.Fallbacks() != 0 {
		t.Fatalf("smp behind the firewall: %s %s %v %s", r4.Status, r4.Reason, r4.Err, r4.Discovery)
	}
}

// saTamper is a transport that rewrites the SA's answers.
type saTamper struct {
	ibmad.Transport
	mu     sync.Mutex
	modify func(m *ibmad.MAD) bool // false: drop the answer
}

func (t *saTamper) Recv(p *ibmad.Packet) error {
	for {
		if err := t.Transport.Recv(p); err != nil {
			return err
		}
		t.mu.Lock()
		f := t.modify
		t.mu.Unlock()
		if f == nil || p.TimedOut || p.MAD.MgmtClass() != ibmad.ClassSubnAdm || !p.MAD.Method().IsResponse() {
			return nil
		}
		if f(&p.MAD) {
			return nil
		}
	}
}

func (t *saTamper) set(f func(m *ibmad.MAD) bool) {
	t.mu.Lock()
	t.modify = f
	t.mu.Unlock()
}

// TestSAModeBadAnswers: an SA that answers errors, answers another record
// than the one asked for, a truncated record set (a link missing), or
// does not answer at all, fails the trace with a reason and a message
// naming the record, never a hang or a panic.
func TestSAModeBadAnswers(t *testing.T) {
	s := loadSim(t, "fattree-mini.net", sim.Options{})
	tp, err := s.f.Attach("H0-0", 0)
	if err != nil {
		t.Fatal(err)
	}
	tam := &saTamper{Transport: tp}
	e := ibmad.NewEngine(tam, ibmad.Options{Timeout: 50 * time.Millisecond, NoRetry: true})
	defer e.Close()
	lid := s.lid("H1-1")
	attrIs := func(m *ibmad.MAD, a ibmad.AttrID) bool { return m.AttrID() == a }
	for _, tc := range []struct {
		name   string
		modify func(m *ibmad.MAD) bool
		reason Reason
		msg    string
	}{
		{"error status", func(m *ibmad.MAD) bool {
			if attrIs(m, ibmad.AttrLFTRecord) {
				m.SetStatus(ibmad.Status(uint16(ibmad.SAStatusReqInvalid) << 8))
			}
			return true
		}, ReasonSA, "SA LinearForwardingTableRecord of LID"},
		{"no records", func(m *ibmad.MAD) bool {
			if attrIs(m, ibmad.AttrLinkRecord) && m.SAData()[2] != 1 { // every link but the host's own
				m.SetStatus(ibmad.Status(uint16(ibmad.SAStatusNoRecords) << 8))
			}
			return true
		}, ReasonNoRoute, "the SA has no such record"},
		{"another record", func(m *ibmad.MAD) bool {
			if attrIs(m, ibmad.AttrLinkRecord) {
				m.SAData()[2]++ // FromPort
			}
			return true
		}, ReasonSA, "answered the link from LID"},
		{"far end without a LID", func(m *ibmad.MAD) bool {
			if attrIs(m, ibmad.AttrLinkRecord) {
				m.SAData()[4], m.SAData()[5] = 0, 0
			}
			return true
		}, ReasonSA, "the far end has LID 0"},
		{"empty node record", func(m *ibmad.MAD) bool {
			if attrIs(m, ibmad.AttrNodeRecord) {
				clear(m.SAData())
			}
			return true
		}, ReasonSA, "NodeRecord of LID"},
		{"silent SA", func(m *ibmad.MAD) bool { return !attrIs(m, ibmad.AttrPortInfoRecord) }, ReasonSA, "did not answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tam.set(tc.modify)
			defer tam.set(nil)
			tr := New(e, Options{Discovery: DiscoverySA, Validate: ValidateOff, Timeout: 50 * time.Millisecond, Retries: new(0), SARecordTTL: new(time.Duration(0))})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			r := tr.Trace(ctx, Destination{LID: lid})
			if ctx.Err() != nil {
				t.Fatal("the trace hung")
			}
			if r.Status != StatusUnreachable || r.Reason != tc.reason || r.Err == nil || !strings.Contains(r.Err.Error(), tc.msg) {
				t.Fatalf("%s %s: %v; want reason %s and %q", r.Status, r.Reason, r.Err, tc.reason, tc.msg)
			}
			t.Logf("%s: %v", tc.name, r.Err)
		})
	}
}

// TestAutoTellsRefusedFromDead: auto mode falls back when the neighbour
// ignores this node's SMPs but is alive (M_Key protection: its PMA
// answers), and does not when the neighbour is dead (a hung leaf answers
// nothing, and the SA's records would trace straight through it).
func TestAutoTellsRefusedFromDead(t *testing.T) {
	s := loadSim(t, "fattree-mini.net", sim.Options{SMNode: "H1-2"})
	ctx := context.Background()
	lid := s.lid("H1-1")

	s.f.SetSMPMKeyProtect(true)
	auto := s.tracer("H0-0", Options{Discovery: DiscoveryAuto, Validate: ValidateOff, Retries: new(0)})
	r := auto.Trace(ctx, Destination{LID: lid})
	if r.Status != StatusOK || r.Discovery != DiscoverySA || auto.Fallbacks() != 1 {
		t.Fatalf("M_Key-protected neighbour: %s %v, discovery %s, %d fallbacks", r.Status, r.Err, r.Discovery, auto.Fallbacks())
	}
	s.f.SetSMPMKeyProtect(false)

	if err := s.f.SetSilent("L0", true); err != nil {
		t.Fatal(err)
	}
	auto2 := s.tracer("H0-0", Options{Discovery: DiscoveryAuto, Validate: ValidateOff, Retries: new(0)})
	r = auto2.Trace(ctx, Destination{LID: lid})
	if r.Status != StatusUnreachable || r.Reason != ReasonTimeout || r.Discovery != DiscoverySMP || auto2.Fallbacks() != 0 {
		t.Fatalf("dead neighbour: %s %s %v, discovery %s, %d fallbacks", r.Status, r.Reason, r.Err, r.Discovery, auto2.Fallbacks())
	}
}

// TestSALinkTableCutShort: an SA that, like OpenSM at LMC > 0, has no
// LinkRecord by the LID of leaf L0, and whose table of a port's links is
// cut short (as ibsim cuts it) before L0's link, fails the SA-mode trace
// with reason sa_error and a message naming the SA's limitation, not "no
// such record". With the whole table, the same trace succeeds.
func TestSALinkTableCutShort(t *testing.T) {
	s := loadSim(t, "fattree-mini.net", sim.Options{})
	tp, err := s.f.Attach("H0-0", 0)
	if err != nil {
		t.Fatal(err)
	}
	tam := &saTamper{Transport: tp}
	e := ibmad.NewEngine(tam, ibmad.Options{Timeout: 50 * time.Millisecond, NoRetry: true})
	defer e.Close()
	l0 := s.lid("L0")
	for _, cut := range []bool{false, true} {
		tam.set(func(m *ibmad.MAD) bool {
			if m.AttrID() != ibmad.AttrLinkRecord {
				return true
			}
			d := m.SAData()
			switch m.Method() {
			case ibmad.MethodGetResp:
				if binary.BigEndian.Uint16(d) == l0 {
					m.SetStatus(ibmad.Status(uint16(ibmad.SAStatusNoRecords) << 8))
				}
			case ibmad.MethodGetTableResp:
				if cut {
					clear(m[24:36]) // RMPP type 0, as ibsim carries OpenSM's table: cut at one MAD
					m[26] = ibmad.RMPPFlagActive
					for i := 0; i+ibmad.LinkRecordSize <= len(d); i += 8 {
						if binary.BigEndian.Uint16(d[i:]) == l0 {
							clear(d[i : i+8])
						}
					}
				}
			}
			return true
		})
		tr := New(e, Options{Discovery: DiscoverySA, Validate: ValidateOff, Timeout: 50 * time.Millisecond, Retries: new(0), SARecordTTL: new(time.Duration(0))})
		r := tr.Trace(context.Background(), Destination{LID: s.lid("H1-1")})
		switch {
		case !cut && r.Status != StatusOK:
			t.Fatalf("whole table: %s %v", r.Status, r.Err)
		case cut && (r.Status != StatusUnreachable || r.Reason != ReasonSA || r.Err == nil || !strings.Contains(r.Err.Error(), "LMC-aligned")):
			t.Fatalf("table cut short: %s %s %v; want reason sa_error naming the SA's LMC-aligned matching", r.Status, r.Reason, r.Err)
		}
		t.Logf("cut %v: %s %v", cut, r.Status, r.Err)
	}
	tam.set(nil)
}
