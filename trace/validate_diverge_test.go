package trace

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/agent"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// divergedAt decodes the JSON report of r and returns, per hop number,
// its diverged_at object, if any.
func divergedAt(t *testing.T, r *Result) map[int]map[string]any {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteJSON(&buf, []*Result{r}); err != nil {
		t.Fatal(err)
	}
	var out []struct {
		Hops []map[string]any `json:"hops"`
	}
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	m := map[int]map[string]any{}
	for _, h := range out[0].Hops {
		if d, ok := h["diverged_at"].(map[string]any); ok {
			m[int(h["hop"].(float64))] = d
		}
	}
	return m
}

// TestMismatchNamesTheDivergingSwitch: the simulator's diverging-switch
// fault (a switch's data plane sends another switch's LID out of a
// parallel cable while its LFT names the first) is seen at the switch
// the MAD arrives at; the report names the switch that forwarded wrongly,
// by name with its GUID, with the hop where it was seen, in the error,
// the summary, -v and the JSON. Twice: L0 diverging for the spine after
// it (on the traced path), and S0 diverging for L1's LID, a spine the
// traced path does not cross (the demo's case). Off the path, the
// mismatch is its own verdict, mismatch_other_link: the destination's
// path is not port_mismatch (the traced link into L1 was not checked),
// and the switch that diverged is still named, with the link the MAD was
// to arrive by (issue 40, defect 8).
func TestMismatchNamesTheDivergingSwitch(t *testing.T) {
	for _, tc := range []struct {
		name      string
		sw        string // the switch made to diverge
		seenAtHop int    // the hop whose validation MAD it misroutes
		mode      ValidateMode
		dst       string
	}{
		{"leaf before the spine, agents", "L0", 2, ValidateAgent, "H1-1"},
		{"leaf before the spine, SMAs", "L0", 2, ValidateSMA, "H1-1"},
		{"spine off the path, SMAs", "", 3, ValidateSMA, "H1-0"},
		{"spine off the path, agents", "", 3, ValidateAuto, "H1-0"},
	} {
		offPath := tc.sw == ""
		t.Run(tc.name, func(t *testing.T) {
			s := loadSim(t, "fattree-mini.net", sim.Options{})
			s.agentsEverywhere()
			tr := s.tracer("H0-0", Options{Validate: tc.mode, NoFastPath: true})
			dst := Destination{LID: s.lid(tc.dst)}
			r := tr.Trace(context.Background(), dst)
			if r.Status != StatusOK || r.PathHops() != 4 {
				t.Fatalf("healthy: %s %v", r.Status, r.Err)
			}
			seen := r.Hops[tc.seenAtHop]
			sw := tc.sw
			if sw == "" { // the last switch of the seen hop's own LID's route
				for _, n := range s.f.Nodes() {
					if n.GUID == seen.ExpectedFrom {
						sw = n.Name
					}
				}
				if sw == "" || sw == r.Hops[tc.seenAtHop-1].NodeDesc {
					t.Fatalf("hop %d's own LID's route comes from %q, want a switch off the path", tc.seenAtHop, sw)
				}
			}
			other := s.divergeParallel(sw, seen)
			lft := s.f.LFT(sw)[seen.LID]
			guid := s.f.Node(sw).GUID
			r = tr.Trace(context.Background(), dst)
			want := fmt.Sprintf("diverging switch %s (%s)", sw, guid)
			if offPath {
				offPathMismatch(t, r, tc.seenAtHop)
			} else {
				if r.Status != StatusMismatch {
					t.Fatalf("status %s, want mismatch", r.Status)
				}
				if r.Err == nil || !strings.Contains(r.Err.Error(), want+", seen at hop "+fmt.Sprint(tc.seenAtHop)) {
					t.Errorf("error %v, want it to name %q seen at hop %d", r.Err, want, tc.seenAtHop)
				}
			}
			if !strings.Contains(r.Summary(), want+fmt.Sprintf(" sent it out of port %d, its LFT says port %d", other, lft)) {
				t.Errorf("summary %q, want %q with the ports", r.Summary(), want)
			}
			var v bytes.Buffer
			r.WriteVerbose(&v)
			if !strings.Contains(v.String(), want) {
				t.Errorf("-v does not name %q:\n%s", want, v.String())
			}
			d := divergedAt(t, r)
			got, ok := d[tc.seenAtHop]
			if !ok || len(d) != 1 || got["switch_name"] != sw || got["switch_guid"] != guid.String() ||
				got["out_port"] != float64(other) || got["lft_port"] != float64(lft) {
				t.Errorf("JSON diverged_at %v, want hop %d: %s %s out %d lft %d", d, tc.seenAtHop, sw, guid, other, lft)
			}
		})
	}
}

// offPathMismatch fails t unless r is a success whose hop seen is
// mismatch_other_link: not counted as a mismatch or in the coverage, its
// checked link (the one its own LID's route was to arrive by) in the JSON.
func offPathMismatch(t *testing.T, r *Result, seen int) {
	t.Helper()
	if r.Status != StatusOK {
		t.Fatalf("status %s %v, want ok: the mismatch is off the traced path", r.Status, r.Err)
	}
	h := r.Hops[seen]
	if h.Agent != AgentMismatchOtherLink {
		t.Fatalf("hop %d %s: %s, want %s", seen, h.NodeDesc, h.Agent, AgentMismatchOtherLink)
	}
	if v := r.Verdicts(); v.Mismatch != 0 || v.MismatchOtherLink != 1 || r.Count(AgentMismatch) != 0 {
		t.Fatalf("verdicts %+v, want one mismatch over another link and none on the path", v)
	}
	if c := r.Coverage(); c.Confirmed >= c.Links {
		t.Fatalf("coverage %s counts the unchecked link", c)
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, []*Result{r}); err != nil {
		t.Fatal(err)
	}
	var out []JSONResult
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	jh := out[0].Hops[seen]
	if jh.Verdict != string(AgentMismatchOtherLink) || jh.CheckedLink == nil || jh.CheckedLink.InPort != h.ExpectedInPort ||
		jh.ActualInPort == nil || *jh.ActualInPort != h.ActualInPort {
		t.Fatalf("JSON hop %d: %+v, want mismatch_other_link with the checked link into port %d and the actual port", seen, jh, h.ExpectedInPort)
	}
}

// noneNamed fails t if r names a diverging switch anywhere: a hop's
// Diverged, the error, the summary, -v or the JSON's diverged_at.
func noneNamed(t *testing.T, r *Result) {
	t.Helper()
	for _, h := range r.Hops {
		if h.Diverged != nil {
			t.Errorf("hop %d %s names %s", h.Hop, h.NodeDesc, h.Diverged)
		}
	}
	if r.Err != nil && strings.Contains(r.Err.Error(), "diverging switch") {
		t.Errorf("error %v names a diverging switch", r.Err)
	}
	if s := r.Summary(); strings.Contains(s, "diverging switch") {
		t.Errorf("summary %q names a diverging switch", s)
	}
	var v bytes.Buffer
	r.WriteVerbose(&v)
	if strings.Contains(v.String(), "diverging switch") {
		t.Errorf("-v names a diverging switch:\n%s", v.String())
	}
	if d := divergedAt(t, r); len(d) != 0 {
		t.Errorf("JSON diverged_at %v, want none", d)
	}
}

// TestMismatchBehindAnInnocentSwitchNamesNone: L0's data plane sends L1's
// LID to the other spine than its LFT names. That spine forwards it to L1
// as its own table says, so the mismatch is seen at L1 (hop 3) with an
// innocent switch behind the port it arrived by: the divergence is two
// links back, where one answer cannot see it, and no switch is named.
func TestMismatchBehindAnInnocentSwitchNamesNone(t *testing.T) {
	for _, mode := range []ValidateMode{ValidateAgent, ValidateSMA} {
		t.Run(string(mode), func(t *testing.T) {
			s := loadSim(t, "fattree-mini.net", sim.Options{})
			s.agentsEverywhere()
			tr := s.tracer("H0-0", Options{Validate: mode, NoFastPath: true})
			dst := Destination{LID: s.lid("H1-1")}
			r := tr.Trace(context.Background(), dst)
			if r.Status != StatusOK || r.PathHops() != 4 || r.Hops[3].NodeDesc != "L1" {
				t.Fatalf("healthy: %s %v", r.Status, r.Err)
			}
			leaf := r.Hops[3]
			l0 := s.f.Node("L0")
			programmed := l0.Ports[s.f.LFT("L0")[leaf.LID]].Remote.Node
			var other uint8
			for _, p := range l0.Ports[1:] {
				if p.Remote != nil && p.Remote.Node.IsSwitch() && p.Remote.Node != programmed {
					other = p.Num
				}
			}
			if other == 0 {
				t.Fatalf("L0 has no link to another spine than %s", programmed.Name)
			}
			if err := s.f.SetForwardOverride("L0", leaf.LID, other); err != nil {
				t.Fatal(err)
			}
			r = tr.Trace(context.Background(), dst)
			if r.Status != StatusMismatch {
				t.Fatalf("status %s %v, want mismatch", r.Status, r.Err)
			}
			h := r.Hops[3]
			if h.Agent != AgentMismatch || h.ActualInPort == 0 {
				t.Fatalf("hop 3 %s: %s, arrived by port %d; want a mismatch with its port", h.NodeDesc, h.Agent, h.ActualInPort)
			}
			// The premise: behind that port is the other spine, whose
			// table sends L1's LID out of the port it used.
			behind := s.f.Node("L1").Ports[h.ActualInPort].Remote
			if spine := l0.Ports[other].Remote.Node; behind.Node != spine || s.f.LFT(spine.Name)[leaf.LID] != behind.Num {
				t.Fatalf("behind L1 port %d is %s port %d, want %s forwarding as programmed", h.ActualInPort, behind.Node.Name, behind.Num, spine.Name)
			}
			noneNamed(t, r)
		})
	}
}

// ingressLiar tells the agent behind it that every ibtracer-class request
// arrived by port: an agent that misreads its ingress.
type ingressLiar struct {
	ibmad.Transport
	port uint8
}

func (l *ingressLiar) Recv(p *ibmad.Packet) error {
	err := l.Transport.Recv(p)
	if err == nil && p.MAD.MgmtClass() == ibmad.ClassIBTracer && p.MAD.Method()&0x80 == 0 && p.InPortKnown {
		p.InPort = l.port
	}
	return err
}

// lftReads is a transport that keeps the directed routes of the
// LinearForwardingTable Gets sent through it.
type lftReads struct {
	ibmad.Transport
	mu    sync.Mutex
	paths []string
}

func (l *lftReads) Send(p *ibmad.Packet) error {
	if m := &p.MAD; m.MgmtClass() == ibmad.ClassSubnDR && m.AttrID() == ibmad.AttrLinearForwardingTable {
		l.mu.Lock()
		l.paths = append(l.paths, ibmad.DRPath(m[129:129+int(m.DRHopCount())]).String())
		l.mu.Unlock()
	}
	return l.Transport.Send(p)
}

// TestMismatchWithACABehindThePortNamesNone: L1's agent says the MAD
// arrived by port 1, H1-0's cable. A CA forwards nothing and has no
// forwarding table: no switch is named, and the tracer does not ask H1-0
// for one.
func TestMismatchWithACABehindThePortNamesNone(t *testing.T) {
	s := loadSim(t, "fattree-mini.net", sim.Options{})
	for _, n := range s.f.Nodes() {
		if n.Name != "L1" {
			s.agentOn(n.Name)
		}
	}
	if s.f.Node("L1").Ports[1].Remote.Node.IsSwitch() {
		t.Fatal("L1 port 1 leads to a switch")
	}
	at, err := s.f.Attach("L1", 0)
	if err != nil {
		t.Fatal(err)
	}
	ae := ibmad.NewEngine(&ingressLiar{Transport: at, port: 1}, ibmad.Options{})
	t.Cleanup(func() { ae.Close() })
	if _, err := agent.New(ae, agent.Config{}); err != nil {
		t.Fatal(err)
	}
	tt, err := s.f.Attach("H0-0", 0)
	if err != nil {
		t.Fatal(err)
	}
	reads := &lftReads{Transport: tt}
	e := ibmad.NewEngine(reads, ibmad.Options{Timeout: 100 * time.Millisecond, Retries: 1})
	t.Cleanup(func() { e.Close() })
	tr := New(e, Options{Validate: ValidateAgent, NoFastPath: true, Timeout: 100 * time.Millisecond})
	r := tr.Trace(context.Background(), Destination{LID: s.lid("H1-1")})
	if r.Status != StatusMismatch || r.PathHops() != 4 {
		t.Fatalf("status %s %v, %d hops; want a mismatch", r.Status, r.Err, r.PathHops())
	}
	h := r.Hops[3]
	if h.NodeDesc != "L1" || h.Agent != AgentMismatch || h.ActualInPort != 1 {
		t.Fatalf("hop 3 %s: %s by port %d, want L1 mismatched by port 1", h.NodeDesc, h.Agent, h.ActualInPort)
	}
	noneNamed(t, r)
	ca := h.DRPath.Extend(1).String()
	reads.mu.Lock()
	defer reads.mu.Unlock()
	for _, p := range reads.paths {
		if p == ca {
			t.Errorf("the forwarding table of H1-0 (path %s), a CA, was asked for", ca)
		}
	}
}

// TestOffPathTextInEverySummary: a hop mismatched over another link is
// named in the summary whatever the trace's status: a success, a path
// that left the subnet, a port mismatch on another hop.
func TestOffPathTextInEverySummary(t *testing.T) {
	for _, st := range []Status{StatusOK, StatusLeftSubnet, StatusMismatch} {
		r := &Result{Status: st, Destination: Destination{LID: 9}, Beyond: &Beyond{}, Hops: []Hop{
			{NodeGUID: 1, NodeDesc: "H0", OutPort: 1, Agent: AgentSource},
			{Hop: 1, NodeGUID: 2, NodeDesc: "L0", InPort: 1, OutPort: 4, Agent: AgentMismatch, ActualInPort: 2, ExpectedInPort: 1},
			{Hop: 2, NodeGUID: 3, NodeDesc: "S1", InPort: 1, Agent: AgentMismatchOtherLink, ActualInPort: 3, ExpectedInPort: 2,
				ExpectedFrom: 2, ExpectedFromName: "L0", ExpectedFromPort: 5},
		}}
		if s := r.Summary(); !strings.Contains(s, "off this path: hop 2 ") || !strings.Contains(s, `"S1" (0x0000000000000003) arrived on port 3, its own LID's route predicts L0 port 5 -> port 2`) {
			t.Errorf("%s: %s", st, s)
		}
	}
}
