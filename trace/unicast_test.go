package trace

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/agent"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

const topoDir = "../testdata/topologies"

type simFabric struct {
	t      testing.TB
	f      *sim.Fabric
	agents map[string]*ibmad.Engine
	rate   float64              // agents' per-source rate limit; 0: the default
	recs   map[string]*recorder // recorded agents by node description (addressing_test.go)
}

func newSim(t testing.TB, topo *sim.Topology, opts sim.Options) *simFabric {
	t.Helper()
	f, err := sim.New(topo, opts)
	if err != nil {
		t.Fatal(err)
	}
	return &simFabric{t: t, f: f, agents: map[string]*ibmad.Engine{}}
}

func loadSim(t testing.TB, file string, opts sim.Options) *simFabric {
	t.Helper()
	topo, err := sim.LoadTopology(filepath.Join(topoDir, file))
	if err != nil {
		t.Fatal(err)
	}
	return newSim(t, topo, opts)
}

// agentOn starts the vendor agent on a node (switches included: the sim
// tells them their true ingress port).
func (s *simFabric) agentOn(names ...string) {
	for _, n := range names {
		tr, err := s.f.Attach(n, 0)
		if err != nil {
			s.t.Fatal(err)
		}
		e := ibmad.NewEngine(tr, ibmad.Options{})
		if _, err := agent.New(e, agent.Config{RatePerSource: s.rate}); err != nil {
			s.t.Fatal(err)
		}
		s.agents[n] = e
		s.t.Cleanup(func() { e.Close() })
	}
}

func (s *simFabric) agentsEverywhere() {
	for _, n := range s.f.Nodes() {
		s.agentOn(n.Name)
	}
}

func (s *simFabric) tracer(node string, o Options) *Tracer {
	tr, err := s.f.Attach(node, 0)
	if err != nil {
		s.t.Fatal(err)
	}
	e := ibmad.NewEngine(tr, ibmad.Options{Timeout: 100 * time.Millisecond, Retries: 1})
	s.t.Cleanup(func() { e.Close() })
	if o.Timeout == 0 {
		o.Timeout = 100 * time.Millisecond
	}
	return New(e, o)
}

func (s *simFabric) lid(name string) uint16 {
	l, err := s.f.LIDOf(name, 0)
	if err != nil {
		s.t.Fatal(err)
	}
	return l
}

func TestHealthyFatTreesValidateEveryHop(t *testing.T) {
	big, err := sim.FatTree2(8, 4, 4, 2) // 8 leaves, 4 spines, 2 parallel links per pair
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		s    *simFabric
		from string
	}{
		{"fattree-mini", loadSim(t, "fattree-mini.net", sim.Options{}), "H0-0"},
		{"fattree2(8,4,4,2)", newSim(t, big, sim.Options{}), "H3-1"},
		{"two-switch, LMC 1", loadSim(t, "two-switch.net", sim.Options{LMC: 1}), "host1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.s
			s.agentsEverywhere()
			tr := s.tracer(tc.from, Options{})
			traced := 0
			for _, lid := range s.f.CALIDs() {
				for off := uint16(0); off < 1<<s.f.PortByLID(lid).LMC; off++ {
					r := tr.Trace(context.Background(), Destination{LID: lid + off})
					if r.Status != StatusOK {
						t.Fatalf("LID %d: %s %v", lid+off, r.Status, r.Err)
					}
					if n := r.Count(AgentMismatch); n != 0 {
						t.Fatalf("LID %d: %d mismatches in a healthy fabric: %+v", lid+off, n, r.Hops)
					}
					if predicted(r) != r.PathHops() {
						t.Fatalf("LID %d: %d of %d hops validated: %+v", lid+off, predicted(r), r.PathHops(), r.Hops)
					}
					if err := checkCoverage(r); err != nil {
						t.Fatalf("LID %d: %v", lid+off, err)
					}
					traced++
				}
			}
			if traced < 5 {
				t.Fatalf("traced only %d LIDs", traced)
			}
		})
	}
}

func TestDivergingSwitchIsTheMismatchedHop(t *testing.T) {
	s := loadSim(t, "fattree-mini.net", sim.Options{})
	s.agentsEverywhere()
	tr := s.tracer("H0-0", Options{})
	dst := s.lid("H1-1")
	r := tr.Trace(context.Background(), Destination{LID: dst})
	if r.Status != StatusOK || r.PathHops() != 4 {
		t.Fatalf("healthy: %s %v, %d hops", r.Status, r.Err, r.PathHops())
	}
	spine := r.Hops[2]
	// L0 keeps its LFT entry for the spine's LID, but its data plane sends
	// that LID over the other link to the same spine: the spine, and only
	// the spine, sees its validation MAD arrive on another port. (An agent
	// sees only MADs addressed to its own LID, so the entry that diverges
	// must be one a validation MAD uses.)
	other := s.divergeParallel("L0", spine)
	l0 := s.f.Node("L0")
	r = tr.Trace(context.Background(), Destination{LID: dst})
	if r.Status != StatusMismatch {
		t.Fatalf("status %s, want mismatch", r.Status)
	}
	for i, h := range r.Hops[1:] {
		if (h.Agent == AgentMismatch) != (i+1 == 2) {
			t.Fatalf("hop %d (%s) agent %s: only hop 2, the spine, should mismatch", i+1, h.NodeDesc, h.Agent)
		}
	}
	h := r.Hops[2]
	wantActual := l0.Ports[other].Remote.Num
	wantExpected := l0.Ports[s.f.LFT("L0")[spine.LID]].Remote.Num
	if h.ActualInPort != wantActual || h.ExpectedInPort != wantExpected || wantActual == wantExpected {
		t.Fatalf("spine: actual %d expected %d; want actual %d expected %d", h.ActualInPort, h.ExpectedInPort, wantActual, wantExpected)
	}
	// The leaf after the spine and the host: the MAD still arrives where the
	// tables say (the spine forwards by its own table).
	if !r.Hops[3].Agent.AsPredicted() || !r.Hops[4].Agent.AsPredicted() {
		t.Fatalf("hops 3-4: %s %s", r.Hops[3].Agent, r.Hops[4].Agent)
	}
}

func TestRepeatTraceUsesFastPath(t *testing.T) {
	s := loadSim(t, "fattree-mini.net", sim.Options{})
	s.agentsEverywhere()
	tr := s.tracer("H0-0", Options{})
	d := Destination{LID: s.lid("H1-1")}
	first := tr.Trace(context.Background(), d)
	second := tr.Trace(context.Background(), d)
	if first.Status != StatusOK || second.Status != StatusOK || first.FastPath || !second.FastPath {
		t.Fatalf("first %s fast=%v, second %s fast=%v", first.Status, first.FastPath, second.Status, second.FastPath)
	}
	if first.Signature() != second.Signature() {
		t.Fatal("the fast path changed the path")
	}
	n := second.PathHops()
	if float64(second.MADs)/float64(n) > 2 {
		t.Fatalf("repeat trace: %d MADs for %d hops, target <= 2 per hop", second.MADs, n)
	}
	t.Logf("first trace %d MADs, repeat %d MADs for %d hops (ibtracert: %d)", first.MADs, second.MADs, n, 5*(n-1)+15)
	// A re-route changes the LFT: the fast path notices and walks.
	l0 := s.f.Node("L0")
	out := first.Hops[1].OutPort
	if err := s.f.SetLinkState("L0", int(out), false, true); err != nil {
		t.Fatal(err)
	}
	third := tr.Trace(context.Background(), d)
	if third.Status != StatusOK || third.FastPath || third.Hops[1].OutPort == out {
		t.Fatalf("after re-route: %s fast=%v out %d (was %d) %v", third.Status, third.FastPath, third.Hops[1].OutPort, out, l0.Name)
	}
}

func TestFailureClasses(t *testing.T) {
	s := loadSim(t, "chain-5.net", sim.Options{})
	s.agentOn("hostB")
	timeout, retries := 50*time.Millisecond, 1
	tr := s.tracer("hostA", Options{Timeout: timeout, Retries: &retries})
	hostB := s.lid("hostB")
	for _, tc := range []struct {
		name    string
		setup   func()
		undo    func()
		dest    Destination
		status  Status
		reason  Reason
		message string
	}{
		{name: "no route", dest: Destination{LID: 500}, status: StatusUnreachable, reason: ReasonNoRoute,
			message: "no route to LID 500: it is above LinearFDBTop"},
		{name: "link down", setup: func() { _ = s.f.SetLinkState("s3", 2, false, false) }, undo: func() { _ = s.f.SetLinkState("s3", 2, true, false) },
			dest: Destination{LID: hostB}, status: StatusUnreachable, reason: ReasonPortDown,
			message: "port 2 of switch \"s3\""},
		{name: "silent switch", setup: func() { _ = s.f.SetSilent("s4", true) }, undo: func() { _ = s.f.SetSilent("s4", false) },
			dest: Destination{LID: hostB}, status: StatusUnreachable, reason: ReasonTimeout, message: "no answer"},
		{name: "loop", setup: func() { _ = s.f.SetLFTEntry("s4", hostB, 1) }, undo: func() { _ = s.f.SetLFTEntry("s4", hostB, 2) },
			dest: Destination{LID: hostB}, status: StatusUnreachable, reason: ReasonLoop,
			message: "routing loop: LID"},
		{name: "dead end", setup: func() { _ = s.f.SetLFTEntry("s2", hostB, ibmad.LFTNoRoute) }, undo: func() { _ = s.f.SetLFTEntry("s2", hostB, 2) },
			dest: Destination{LID: hostB}, status: StatusUnreachable, reason: ReasonNoRoute,
			message: "has no forwarding entry for it"},
		{name: "unknown GUID", dest: Destination{GUID: 0xdead}, status: StatusResolve, reason: ReasonSA,
			message: "the SA knows no such port"},
		{name: "unknown node", dest: Destination{Node: "nobody"}, status: StatusResolve, reason: ReasonSA},
		{name: "bad destination", dest: Destination{}, status: StatusResolve, reason: ReasonBadConfig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.setup != nil {
				tc.setup()
			}
			if tc.undo != nil {
				defer tc.undo()
			}
			start := time.Now()
			r := tr.Trace(context.Background(), tc.dest)
			took := time.Since(start)
			if r.Status != tc.status || r.Reason != tc.reason {
				t.Fatalf("got %s/%s (%v), want %s/%s", r.Status, r.Reason, r.Err, tc.status, tc.reason)
			}
			if tc.message != "" && (r.Err == nil || !strings.Contains(r.Err.Error(), tc.message)) {
				t.Fatalf("message %q does not say %q", r.Err, tc.message)
			}
			// Bounded: at most timeout x attempts per hop of the path, plus
			// the diagnosis MAD.
			if bound := time.Duration(retries+1) * timeout * 8; took > bound {
				t.Fatalf("took %v, bound %v", took, bound)
			}
		})
	}
}

func TestAgentVanishesMidTrace(t *testing.T) {
	s := loadSim(t, "chain-5.net", sim.Options{})
	s.agentOn("hostB", "hostC")
	tr := s.tracer("hostA", Options{Validate: ValidateAgent, Timeout: 50 * time.Millisecond, Retries: new(1)})
	d := Destination{LID: s.lid("hostB")}
	if r := tr.Trace(context.Background(), d); r.Status != StatusOK || r.Hops[len(r.Hops)-1].Agent != AgentValidated {
		t.Fatalf("before: %s", r.Status)
	}
	s.agents["hostB"].Close() // the agent process dies; ClassPortInfo support is still cached
	r := tr.Trace(context.Background(), d)
	last := r.Hops[len(r.Hops)-1]
	if r.Status != StatusOK || last.Agent != AgentLost {
		t.Fatalf("after: %s, last hop %s (want ok with the hop lost)", r.Status, last.Agent)
	}
	// Next time the node is known to have no agent.
	r = tr.Trace(context.Background(), d)
	if last := r.Hops[len(r.Hops)-1]; last.Agent != AgentUnsupported {
		t.Fatalf("third trace: %s", last.Agent)
	}
}

func TestResolveThroughSA(t *testing.T) {
	s := loadSim(t, "two-switch.net", sim.Options{})
	tr := s.tracer("host1", Options{})
	h4 := s.f.Node("host4")
	want := s.lid("host4")
	for _, d := range []Destination{
		{GUID: h4.Ports[1].GUID},
		{GID: ibmad.MakeGID(ibmad.DefaultGIDPrefix, h4.Ports[1].GUID)},
		{Node: "host4"},
		{Node: "sw2"},
	} {
		r := tr.Trace(context.Background(), d)
		if r.Status != StatusOK {
			t.Fatalf("%s: %s %v", d, r.Status, r.Err)
		}
		if d.Node == "sw2" {
			want = s.lid("sw2")
		}
		if r.DLID != want {
			t.Fatalf("%s resolved to %d, want %d", d, r.DLID, want)
		}
	}
	// A node with several ports: its first port by default, or the one
	// named; the result says which.
	p1, _ := s.f.LIDOf("host5", 1)
	p2, _ := s.f.LIDOf("host5", 2)
	for _, c := range []struct {
		d    Destination
		lid  uint16
		port uint8
	}{
		{Destination{Node: "host5"}, p1, 1},
		{Destination{Node: "host5", Port: 1}, p1, 1},
		{Destination{Node: "host5", Port: 2}, p2, 2},
		{Destination{Node: "host4"}, s.lid("host4"), 1},
		{Destination{Node: "sw2"}, s.lid("sw2"), 0},
	} {
		r := tr.Trace(context.Background(), c.d)
		if r.Status != StatusOK || r.DLID != c.lid || r.Port != c.port {
			t.Fatalf("%s: %s %v, DLID %d port %d, want %d port %d", c.d, r.Status, r.Err, r.DLID, r.Port, c.lid, c.port)
		}
		if j := r.JSON(); j.Port != c.port {
			t.Fatalf("%s: JSON port %d", c.d, j.Port)
		}
		if c.d.Port == 0 && c.port != 0 && !strings.Contains(r.Summary(), fmt.Sprintf("-> lid %d (port %d)", c.lid, c.port)) {
			t.Fatalf("%s: summary %q does not name the port", c.d, r.Summary())
		}
	}
	for _, c := range []struct {
		d    Destination
		want string
	}{
		{Destination{Node: "host5", Port: 3}, "knows no port 3"},
		{Destination{Node: "sw2", Port: 1}, "knows no port 1"},
		{Destination{LID: 3, Port: 1}, "port applies only to a node"},
	} {
		if r := tr.Trace(context.Background(), c.d); r.Status != StatusResolve || r.DLID != 0 || !strings.Contains(r.Err.Error(), c.want) {
			t.Fatalf("%s: %s %v, DLID %d; want a resolve failure %q", c.d, r.Status, r.Err, r.DLID, c.want)
		}
	}
	all, err := tr.AllCAPorts(context.Background())
	if err != nil || len(all) != 6 { // five hosts, host5 with two ports
		t.Fatalf("AllCAPorts: %v %v", err, all)
	}
}

// TestResolveNodeFirstActivePort: a node whose first port is down
// resolves to its next port; a description several nodes share is an
// error naming that, not a random pick.
func TestResolveNodeFirstActivePort(t *testing.T) {
	s := loadSim(t, "two-switch.net", sim.Options{})
	if err := s.f.SetLinkState("host5", 1, false, true); err != nil {
		t.Fatal(err)
	}
	tr := s.tracer("host1", Options{})
	p2, _ := s.f.LIDOf("host5", 2)
	if r := tr.Trace(context.Background(), Destination{Node: "host5"}); r.Status != StatusOK || r.DLID != p2 || r.Port != 2 {
		t.Fatalf("host5 with port 1 down: %s %v, DLID %d port %d, want %d port 2", r.Status, r.Err, r.DLID, r.Port, p2)
	}
	if r := tr.Trace(context.Background(), Destination{Node: "host5", Port: 1}); r.Status != StatusResolve {
		t.Fatalf("host5 port 1 down: %s %v", r.Status, r.Err)
	}

	topo := sim.NewTopology("twins")
	for _, n := range []struct {
		typ   ibmad.NodeType
		name  string
		ports int
	}{{ibmad.NodeTypeSwitch, "sw", 4}, {ibmad.NodeTypeCA, "a", 1}, {ibmad.NodeTypeCA, "b", 1}, {ibmad.NodeTypeCA, "c", 1}} {
		spec, err := topo.AddNode(n.typ, n.name, n.ports)
		if err != nil {
			t.Fatal(err)
		}
		if n.name != "sw" && n.name != "a" {
			spec.Desc = "twin"
		}
	}
	for i, n := range []string{"a", "b", "c"} {
		if err := topo.Connect("sw", i+1, n, 1); err != nil {
			t.Fatal(err)
		}
	}
	tw := newSim(t, topo, sim.Options{})
	r := tw.tracer("a", Options{}).Trace(context.Background(), Destination{Node: "twin"})
	if r.Status != StatusResolve || !strings.Contains(r.Err.Error(), "several nodes") {
		t.Fatalf("a description two nodes share: %s %v", r.Status, r.Err)
	}
}

// TestSharedValidation: with ShareValidation, a switch on many paths is
// asked once; a fault on it is seen once the shared verdict expires, so
// detection waits at most the sharing time.
func TestSharedValidation(t *testing.T) {
	s := loadSim(t, "fattree-mini.net", sim.Options{})
	s.agentsEverywhere()
	const share = 10 * time.Second
	clock := newFakeClock() // the sharing time passes only when the test says so
	shared := s.tracer("H0-0", Options{ShareValidation: share, Clock: clock})
	plain := s.tracer("H0-0", Options{})
	var withShare, without int
	for _, h := range []string{"H1-0", "H1-1", "H1-2", "H0-1", "H0-2"} {
		d := Destination{LID: s.lid(h)}
		a, b := shared.Trace(context.Background(), d), plain.Trace(context.Background(), d)
		if a.Status != StatusOK || b.Status != StatusOK || a.Count(AgentValidated) != b.Count(AgentValidated) {
			t.Fatalf("%s: shared %s/%d validated, plain %s/%d", h, a.Status, a.Count(AgentValidated), b.Status, b.Count(AgentValidated))
		}
		withShare += a.MADs
		without += b.MADs
	}
	if withShare >= without {
		t.Fatalf("sharing spent %d MADs, not sharing %d", withShare, without)
	}
	t.Logf("5 first traces: %d MADs with shared validation, %d without", withShare, without)
	// Repeat traces share LFT blocks too: the five LIDs sit in one block.
	withShare, without = 0, 0
	for _, h := range []string{"H1-0", "H1-1", "H1-2", "H0-1", "H0-2"} {
		d := Destination{LID: s.lid(h)}
		a, b := shared.Trace(context.Background(), d), plain.Trace(context.Background(), d)
		if !a.FastPath || !b.FastPath || a.Signature() != b.Signature() {
			t.Fatalf("%s: repeat traces not on the fast path or on different paths", h)
		}
		withShare += a.MADs
		without += b.MADs
	}
	if withShare >= without {
		t.Fatalf("repeat traces: sharing spent %d MADs, not sharing %d", withShare, without)
	}
	t.Logf("5 repeat traces: %d MADs with sharing, %d without", withShare, without)
	// A diverging switch is caught once the shared verdict has expired.
	r := shared.Trace(context.Background(), Destination{LID: s.lid("H1-1")})
	spine := r.Hops[2]
	programmed := s.f.LFT("L0")[spine.LID]
	for _, p := range s.f.Node("L0").Ports[1:] {
		if p.Remote != nil && p.Remote.Node.GUID == spine.NodeGUID && p.Num != programmed {
			_ = s.f.SetForwardOverride("L0", spine.LID, p.Num)
			break
		}
	}
	if r = shared.Trace(context.Background(), Destination{LID: s.lid("H1-1")}); r.Status != StatusOK {
		t.Fatalf("within the sharing time the shared verdict stands: %s", r.Status)
	}
	clock.Add(share)
	if r = shared.Trace(context.Background(), Destination{LID: s.lid("H1-1")}); r.Status != StatusMismatch {
		t.Fatalf("after the fault and the sharing time: %s", r.Status)
	}
}

// divergeParallel makes switch sw's data plane send hop's LID over
// another link to the same neighbour than its LFT names (the
// diverging-switch fault), and returns the port it now sends by; the test
// fails if there is no parallel link.
func (s *simFabric) divergeParallel(sw string, hop Hop) uint8 {
	s.t.Helper()
	programmed := s.f.LFT(sw)[hop.LID]
	var other uint8
	for _, p := range s.f.Node(sw).Ports[1:] {
		if p.Remote != nil && p.Remote.Node.GUID == hop.NodeGUID && p.Num != programmed {
			other = p.Num
		}
	}
	if other == 0 {
		s.t.Fatalf("%s: no parallel link toward %s", sw, hop.NodeGUID)
	}
	if err := s.f.SetForwardOverride(sw, hop.LID, other); err != nil {
		s.t.Fatal(err)
	}
	return other
}
