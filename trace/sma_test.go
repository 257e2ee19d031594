package trace

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// everyLID is every CA port's LID and every switch's LID of s's fabric.
func (s *simFabric) everyLID() []uint16 {
	lids := append([]uint16(nil), s.f.CALIDs()...)
	for _, n := range s.f.Nodes() {
		if n.IsSwitch() {
			lids = append(lids, s.lid(n.Name))
		}
	}
	return lids
}

// checkSMAValidated fails unless every hop after the source of r was
// validated by the SMA, on the port the tables predict.
func checkSMAValidated(r *Result) error {
	if r.Status != StatusOK {
		return fmt.Errorf("LID %d: %s %v", r.DLID, r.Status, r.Err)
	}
	for _, h := range r.Hops[1:] {
		if !h.Agent.AsPredicted() || h.ValidatedBy != BySMA || h.ActualInPort != h.ExpectedInPort || h.ActualInPort == 0 {
			return fmt.Errorf("LID %d hop %d %s: verdict %q by %q, in port %d expected %d; want validated by sma",
				r.DLID, h.Hop, h.NodeDesc, h.Agent, h.ValidatedBy, h.ActualInPort, h.ExpectedInPort)
		}
	}
	return nil
}

// TestSMAValidatesEveryHopWithoutAgents: on the in-process simulator,
// whose switches fill NodeInfo.LocalPortNum for LID-routed SMPs as real
// switches do (docs/protocol.md, "Validation by the SMA"), with no agent
// on any node, every hop of every path of fattree-128 (to every CA and
// every switch) is validated by its SMA, in auto and sma modes.
func TestSMAValidatesEveryHopWithoutAgents(t *testing.T) {
	s := loadSim(t, "fattree-128.net", sim.Options{})
	for _, mode := range []ValidateMode{ValidateAuto, ValidateSMA} {
		t.Run(string(mode), func(t *testing.T) {
			tr := s.tracer("H0-0", Options{Validate: mode})
			hops := 0
			for _, lid := range s.everyLID() {
				if lid == s.lid("H0-0") {
					continue
				}
				r := tr.Trace(context.Background(), Destination{LID: lid})
				if err := checkSMAValidated(r); err != nil {
					t.Fatal(err)
				}
				hops += r.PathHops()
			}
			if hops < 127*2 {
				t.Fatalf("only %d hops traced", hops)
			}
		})
	}
}

// TestSMASeesTheDivergingSwitch: with no agent anywhere, the fault of a
// switch whose data plane sends a spine's LID over another cable than its
// LFT says (the demo's diverging switch) makes the spine's SMA answer
// another LocalPortNum than the tables predict: a mismatch at the spine,
// and only there, kept after the re-walk.
func TestSMASeesTheDivergingSwitch(t *testing.T) {
	for _, mode := range []ValidateMode{ValidateAuto, ValidateSMA} {
		t.Run(string(mode), func(t *testing.T) {
			s := loadSim(t, "fattree-mini.net", sim.Options{})
			tr := s.tracer("H0-0", Options{Validate: mode})
			dst := s.lid("H1-1")
			r := tr.Trace(context.Background(), Destination{LID: dst})
			if err := checkSMAValidated(r); err != nil || r.PathHops() != 4 {
				t.Fatalf("healthy: %v, %d hops", err, r.PathHops())
			}
			spine := r.Hops[2]
			l0, programmed := s.f.Node("L0"), s.f.LFT("L0")[spine.LID]
			other := s.divergeParallel("L0", spine)
			r = tr.Trace(context.Background(), Destination{LID: dst})
			if r.Status != StatusMismatch {
				t.Fatalf("status %s (%v), want mismatch", r.Status, r.Err)
			}
			for _, h := range r.Hops[1:] {
				if (h.Agent == AgentMismatch) != (h.Hop == 2) || h.ValidatedBy != BySMA {
					t.Fatalf("hop %d (%s): %s by %q; want only hop 2, the spine, mismatched, every hop by sma", h.Hop, h.NodeDesc, h.Agent, h.ValidatedBy)
				}
			}
			h := r.Hops[2]
			wantActual, wantExpected := l0.Ports[other].Remote.Num, l0.Ports[programmed].Remote.Num
			if h.ActualInPort != wantActual || h.ExpectedInPort != wantExpected {
				t.Fatalf("spine: in port %d expected %d; want %d expected %d", h.ActualInPort, h.ExpectedInPort, wantActual, wantExpected)
			}
		})
	}
}

// TestSMAWithAgentsAuto: in auto mode a hop whose agent answers is
// validated by the agent, the others by their SMA; agent mode leaves the
// hops without an agent unsupported, as before.
func TestSMAWithAgentsAuto(t *testing.T) {
	s := loadSim(t, "fattree-mini.net", sim.Options{})
	s.agentOn("L0", "H1-2")
	dst := Destination{LID: s.lid("H1-2")}
	r := s.tracer("H0-0", Options{Validate: ValidateAuto}).Trace(context.Background(), dst)
	if r.Status != StatusOK || predicted(r) != r.PathHops() {
		t.Fatalf("auto: %s %v, %d of %d validated", r.Status, r.Err, predicted(r), r.PathHops())
	}
	for _, h := range r.Hops[1:] {
		want := BySMA
		if h.NodeDesc == "L0" || h.Hop == r.PathHops() {
			want = ByAgent
		}
		if h.ValidatedBy != want {
			t.Errorf("auto: hop %d %s validated by %q, want %q", h.Hop, h.NodeDesc, h.ValidatedBy, want)
		}
	}
	r = s.tracer("H0-0", Options{Validate: ValidateAgent}).Trace(context.Background(), dst)
	if r.Status != StatusOK || r.Count(AgentUnsupported) != 2 || predicted(r) != 2 {
		t.Fatalf("agent: %s, %s", r.Status, r.Verdicts())
	}
}

// lidSMPs is the number of LID-routed SMPs (class 0x01: the SMA
// validation's) tr's engine has sent.
func lidSMPs(tr *Tracer) int {
	for _, c := range tr.Engine().Stats().Classes {
		if c.Class == ibmad.ClassSubnLID {
			return int(c.Requests)
		}
	}
	return 0
}

// TestSMASharedAcrossDestinations: a trace sends at most one SMA
// validation SMP per hop, and within ShareValidation a hop's verdict
// serves every destination whose path crosses it: a second destination
// behind the same switches costs one (its own hop), and after the window
// every hop is asked again.
func TestSMASharedAcrossDestinations(t *testing.T) {
	s := loadSim(t, "fattree-mini.net", sim.Options{})
	clock := newFakeClock()
	tr := s.tracer("H0-0", Options{Validate: ValidateSMA, ShareValidation: 10 * time.Second, NoFastPath: true, Clock: clock})
	ctx := context.Background()
	trace := func(name string) (*Result, int) {
		before := lidSMPs(tr)
		r := tr.Trace(ctx, Destination{LID: s.lid(name)})
		if err := checkSMAValidated(r); err != nil {
			t.Fatal(err)
		}
		return r, lidSMPs(tr) - before
	}
	a, n := trace("H1-1")
	if n != a.PathHops() {
		t.Fatalf("first destination: %d SMA SMPs for %d hops, want one per hop", n, a.PathHops())
	}
	b, n := trace("H1-2")
	shared := 0
	for i := 1; i < len(b.Hops)-1; i++ {
		if b.Hops[i].NodeGUID == a.Hops[i].NodeGUID {
			shared++
		}
	}
	if shared == 0 || n != b.PathHops()-shared {
		t.Fatalf("second destination: %d SMA SMPs for %d hops of which %d shared; want %d", n, b.PathHops(), shared, b.PathHops()-shared)
	}
	clock.Add(11 * time.Second)
	if b, n = trace("H1-2"); n != b.PathHops() {
		t.Fatalf("after the window: %d SMA SMPs for %d hops, want one per hop", n, b.PathHops())
	}
}

// TestSMANotAskedBehindSMPFirewall: where this node may not send SMPs
// (the sim's SMP firewall; the walk reads the SA instead), the SMA is not
// asked: every hop not_asked, the reason once in the result, the trace
// ok, and not one SMA validation MAD sent.
func TestSMANotAskedBehindSMPFirewall(t *testing.T) {
	s := loadSim(t, "fattree-mini.net", sim.Options{})
	s.f.SetSMPFirewall(true)
	ctx := context.Background()
	d := Destination{LID: s.lid("H1-2")}
	r := s.tracer("H0-1", Options{Validate: ValidateSMA, Discovery: DiscoverySA}).Trace(ctx, d)
	off := s.tracer("H0-1", Options{Validate: ValidateOff, Discovery: DiscoverySA}).Trace(ctx, d)
	if r.Status != StatusOK || r.Count(AgentNotAsked) != r.PathHops() || r.ValidationNote == "" {
		t.Fatalf("%s %v, %s, note %q", r.Status, r.Err, r.Verdicts(), r.ValidationNote)
	}
	if r.MADs != off.MADs {
		t.Fatalf("%d MADs, %d without validation: the SMA was asked", r.MADs, off.MADs)
	}
	var buf bytes.Buffer
	r.WriteVerbose(&buf)
	if n := strings.Count(buf.String(), r.ValidationNote); n != 1 {
		t.Fatalf("the reason is %d times in -v, want once:\n%s", n, buf.String())
	}
}

// TestSMAFastPath: a path whose hops the SMAs validated is confirmed by
// the fast path, one LID-routed SMP per hop, and a divergence that starts
// afterwards is not confirmed: the walk runs and reports the mismatch.
func TestSMAFastPath(t *testing.T) {
	s := loadSim(t, "fattree-mini.net", sim.Options{})
	tr := s.tracer("H0-0", Options{Validate: ValidateSMA})
	d := Destination{LID: s.lid("H1-1")}
	ctx := context.Background()
	first := tr.Trace(ctx, d)
	before := lidSMPs(tr)
	second := tr.Trace(ctx, d)
	if err := checkSMAValidated(second); err != nil || first.FastPath || !second.FastPath {
		t.Fatalf("second trace: %v, fast path %v (first %v)", err, second.FastPath, first.FastPath)
	}
	if n := lidSMPs(tr) - before; n != second.PathHops() {
		t.Fatalf("fast path: %d SMA SMPs for %d hops", n, second.PathHops())
	}
	spine := second.Hops[2]
	programmed := s.f.LFT("L0")[spine.LID]
	for _, p := range s.f.Node("L0").Ports[1:] {
		if p.Remote != nil && p.Remote.Node.GUID == spine.NodeGUID && p.Num != programmed {
			if err := s.f.SetForwardOverride("L0", spine.LID, p.Num); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	third := tr.Trace(ctx, d)
	if third.FastPath || third.Status != StatusMismatch || third.Hops[2].Agent != AgentMismatch {
		t.Fatalf("after the divergence: fast path %v, %s, spine %s", third.FastPath, third.Status, third.Hops[2].Agent)
	}
}
