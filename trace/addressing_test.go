package trace

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/agent"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// recorder is a transport that keeps the address of every ibtracer-class
// request it receives: what the destination's kernel would tell its agent.
type recorder struct {
	ibmad.Transport
	mu  sync.Mutex
	got []ibmad.Address
}

func (r *recorder) Recv(p *ibmad.Packet) error {
	err := r.Transport.Recv(p)
	if err == nil && p.MAD.MgmtClass() == ibmad.ClassIBTracer && p.MAD.Method()&0x80 == 0 {
		r.mu.Lock()
		r.got = append(r.got, p.Addr)
		r.mu.Unlock()
	}
	return err
}

func (r *recorder) addrs() []ibmad.Address {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]ibmad.Address(nil), r.got...)
}

// recordedAgent starts the agent at node behind a recorder.
func (s *simFabric) recordedAgent(node string) *recorder {
	tr, err := s.f.Attach(node, 0)
	if err != nil {
		s.t.Fatal(err)
	}
	rec := &recorder{Transport: tr}
	e := ibmad.NewEngine(rec, ibmad.Options{})
	if _, err := agent.New(e, agent.Config{}); err != nil {
		s.t.Fatal(err)
	}
	s.agents[node] = e
	s.t.Cleanup(func() { e.Close() })
	return rec
}

// qosFabric is fattree-mini with recorded agents everywhere (by node
// description) and H1-2's PathRecord carrying q; it returns H1-2's
// recorder and port GUID.
func qosFabric(t *testing.T, q sim.PathQoS) (*simFabric, *recorder, ibmad.GUID) {
	s := loadSim(t, "fattree-mini.net", sim.Options{})
	s.recs = map[string]*recorder{}
	for _, n := range s.f.Nodes() {
		s.recs[n.Desc] = s.recordedAgent(n.Name)
	}
	guid := s.f.Node("H1-2").Ports[1].GUID
	s.f.SetPathQoS(guid, q)
	return s, s.recs[s.f.Node("H1-2").Desc], guid
}

// TestSLFromPathRecord: a GUID or node destination's validation MADs go
// on its PathRecord's SL, a LID destination's on the configured one, and a
// configured SL (--sl, sl:) wins over the PathRecord's. The fabric drops
// GMPs on SL 0 (no VL serves it), so a MAD sent on the wrong SL is lost.
func TestSLFromPathRecord(t *testing.T) {
	s, rec, guid := qosFabric(t, sim.PathQoS{SL: 3})
	s.f.SetSLUnusable(0, true)
	ctx := context.Background()
	dlid := s.lid("H1-2")
	for _, tc := range []struct {
		name      string
		d         Destination
		o         Options
		sl        uint8
		from      SLFrom
		validated bool
	}{
		{"guid: the PathRecord's SL", Destination{GUID: guid}, Options{}, 3, SLFromPathRecord, true},
		{"node: the PathRecord's SL", Destination{Node: "H1-2"}, Options{}, 3, SLFromPathRecord, true},
		{"lid: no PathRecord, SL 0 is dropped", Destination{LID: dlid}, Options{}, 0, SLFromDefault, false},
		{"guid with sl: 0 given: it wins and is dropped", Destination{GUID: guid}, Options{SL: FixedSL(0)}, 0, SLFromOption, false},
		{"guid with sl: 5 given: it wins", Destination{GUID: guid}, Options{SL: FixedSL(5)}, 5, SLFromOption, true},
		{"lid with sl: 5", Destination{LID: dlid}, Options{SL: FixedSL(5)}, 5, SLFromOption, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(rec.addrs())
			o := tc.o
			o.Retries, o.Validate = new(0), ValidateAgent
			r := s.tracer("H0-0", o).Trace(ctx, tc.d)
			if r.Addressing == nil || r.Addressing.SL != tc.sl || r.Addressing.SLFrom != tc.from || r.Addressing.GRH {
				t.Fatalf("addressing %+v, want SL %d from %s, no GRH", r.Addressing, tc.sl, tc.from)
			}
			if got := predicted(r) == r.PathHops(); got != tc.validated {
				t.Fatalf("every hop validated: %v, want %v (%s %v): %+v", got, tc.validated, r.Status, r.Err, r.Hops)
			}
			for _, a := range rec.addrs()[before:] {
				if a.SL != tc.sl || a.GRHPresent {
					t.Fatalf("the destination's agent got SL %d GRH %v, want SL %d, none", a.SL, a.GRHPresent, tc.sl)
				}
			}
			if tc.validated && len(rec.addrs()) == before {
				t.Fatal("the destination's agent was not asked")
			}
		})
	}
	if s.f.QoSDrops() == 0 {
		t.Fatal("no MAD was dropped for its SL: the SL 0 cases prove nothing")
	}
}

// TestGRHFromPathRecord: a PathRecord with a hop limit over 1 puts a GRH
// (its DGID, hop limit, traffic class and flow label) on the vendor MADs
// to the destination, and on those only; the report says so in JSON and
// -v. The sim drops a GRH whose DGID is not the receiving port's GID.
func TestGRHFromPathRecord(t *testing.T) {
	q := sim.PathQoS{SL: 2, HopLimit: 64, TClass: 0x28, FlowLabel: 0x12345}
	s, rec, guid := qosFabric(t, q)
	r := s.tracer("H0-0", Options{Validate: ValidateAgent, Retries: new(0)}).Trace(context.Background(), Destination{GUID: guid})
	if r.Status != StatusOK || predicted(r) != r.PathHops() {
		t.Fatalf("%s %v: %+v", r.Status, r.Err, r.Hops)
	}
	dgid := ibmad.MakeGID(ibmad.DefaultGIDPrefix, guid)
	want := Addressing{SL: 2, SLFrom: SLFromPathRecord, GRH: true, DGID: dgid, HopLimit: 64, TClass: 0x28, FlowLabel: 0x12345}
	if *r.Addressing != want {
		t.Fatalf("addressing %+v, want %+v", *r.Addressing, want)
	}
	got := rec.addrs()
	if len(got) < 2 { // ClassPortInfo and SourceRoute
		t.Fatalf("the destination's agent got %d requests", len(got))
	}
	src, _ := s.agents["H1-2"].Port() // any engine: for the GID prefix
	h00 := s.f.Node("H0-0").Ports[1].GUID
	for _, a := range got {
		if !a.GRHPresent || a.HopLimit != 64 || a.TClass != 0x28 || a.FlowLabel != 0x12345 || a.SL != 2 ||
			a.GID != ibmad.MakeGID(src.GIDPrefix, h00) {
			t.Fatalf("the destination's agent got %+v", a)
		}
	}
	// The fast path confirms the cached path with the same addressing.
	fast := s.tracer("H0-0", Options{Validate: ValidateAgent, Retries: new(0)})
	_ = fast.Trace(context.Background(), Destination{GUID: guid})
	before := len(rec.addrs())
	if r2 := fast.Trace(context.Background(), Destination{GUID: guid}); !r2.FastPath || r2.Status != StatusOK || *r2.Addressing != want {
		t.Fatalf("fast path: %v %s %+v", r2.FastPath, r2.Status, r2.Addressing)
	}
	if got := rec.addrs()[before:]; len(got) == 0 || !got[0].GRHPresent || got[0].HopLimit != 64 {
		t.Fatalf("the fast path's MAD to the destination: %+v", got)
	}
	// Other hops: the SL, no GRH (their GIDs are not the DGID).
	for _, h := range r.Hops[1 : len(r.Hops)-1] {
		sw := s.recs[h.NodeDesc].addrs()
		if len(sw) == 0 {
			t.Fatalf("hop %d's agent was not asked", h.Hop)
		}
		for _, a := range sw {
			if a.GRHPresent || a.SL != 2 {
				t.Fatalf("hop %d got %+v", h.Hop, a)
			}
		}
	}
	checkGRHReport(t, r, dgid)
}

// checkGRHReport: the JSON and -v forms of r say SL 2 from the PathRecord
// and the GRH to dgid.
func checkGRHReport(t *testing.T, r *Result, dgid ibmad.GID) {
	t.Helper()
	var out bytes.Buffer
	if err := WriteJSON(&out, []*Result{r}); err != nil {
		t.Fatal(err)
	}
	var js []map[string]any
	if err := json.Unmarshal(out.Bytes(), &js); err != nil {
		t.Fatal(err)
	}
	a, _ := js[0]["addressing"].(map[string]any)
	if a["sl"] != 2.0 || a["sl_from"] != "path_record" || a["grh"] != true || a["grh_hop_limit"] != 64.0 ||
		a["grh_traffic_class"] != 40.0 || a["grh_flow_label"] != float64(0x12345) || a["grh_dgid"] != dgid.String() {
		t.Fatalf("JSON addressing %v", a)
	}
	out.Reset()
	r.WriteVerbose(&out)
	if !strings.Contains(out.String(), "Validation MADs: SL 2 (from the PathRecord), GRH to "+dgid.String()+" hop limit 64 traffic class 40 flow label 0x12345") {
		t.Fatalf("-v:\n%s", out.String())
	}
}

// TestGRHWithAWrongDGIDIsDropped: the sim honours the GRH, so a GRH the
// destination does not own loses the MADs (the check above can fail).
func TestGRHWithAWrongDGIDIsDropped(t *testing.T) {
	s, _, guid := qosFabric(t, sim.PathQoS{})
	tr := s.tracer("H0-0", Options{Validate: ValidateAgent, Retries: new(0)})
	w := newWalk(tr, context.Background(), ibmad.PortAttributes{}, s.lid("H1-2"))
	w.addr = Addressing{GRH: true, DGID: ibmad.MakeGID(ibmad.DefaultGIDPrefix, guid+1), HopLimit: 64}
	req := &ibmad.Request{Addr: w.addr.GMPAddress(s.lid("H1-2"), true)}
	_ = ibmad.NewVendorGet(ibmad.ClassIBTracer, ibmad.OUIOpenIB, ibmad.AttrClassPortInfo, 0).MarshalTo(req.MAD[:])
	if _, err := w.do(req); err == nil {
		t.Fatal("a GRH to another port's GID was answered")
	}
	w.addr.DGID = ibmad.MakeGID(ibmad.DefaultGIDPrefix, guid)
	req.Addr = w.addr.GMPAddress(s.lid("H1-2"), true)
	if _, err := w.do(req); err != nil {
		t.Fatalf("a GRH to the destination's GID: %v", err)
	}
}

// TestAddressingRules: when a GRH is used, and its hop limit.
func TestAddressingRules(t *testing.T) {
	local := ibmad.PortAttributes{GIDPrefix: 0}
	here := ibmad.MakeGID(ibmad.DefaultGIDPrefix, 7)
	there := ibmad.MakeGID(0xfec0_0000_0000_0001, 7)
	for _, tc := range []struct {
		name string
		pr   *ibmad.PathRecord
		o    Options
		want Addressing
	}{
		{"lid", nil, Options{}, Addressing{SLFrom: SLFromDefault}},
		{"lid, sl given", nil, Options{SL: FixedSL(4)}, Addressing{SL: 4, SLFrom: SLFromOption}},
		{"hop limit 0", &ibmad.PathRecord{DGID: here, SL: 1}, Options{}, Addressing{SL: 1, SLFrom: SLFromPathRecord}},
		{"hop limit 1", &ibmad.PathRecord{DGID: here, HopLimit: 1}, Options{}, Addressing{SLFrom: SLFromPathRecord}},
		{"hop limit 2", &ibmad.PathRecord{DGID: here, HopLimit: 2, TClass: 3, FlowLabel: 9}, Options{},
			Addressing{SLFrom: SLFromPathRecord, GRH: true, DGID: here, HopLimit: 2, TClass: 3, FlowLabel: 9}},
		{"another subnet, hop limit 0", &ibmad.PathRecord{DGID: there}, Options{},
			Addressing{SLFrom: SLFromPathRecord, GRH: true, DGID: there, HopLimit: 255}},
		{"another subnet, hop limit 8", &ibmad.PathRecord{DGID: there, HopLimit: 8}, Options{},
			Addressing{SLFrom: SLFromPathRecord, GRH: true, DGID: there, HopLimit: 8}},
	} {
		if got := tc.o.AddressingFor(tc.pr, local); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
	a := Addressing{SL: 3, GRH: true, DGID: there, HopLimit: 9, TClass: 1, FlowLabel: 2}
	if g := a.GMPAddress(5, false); g.GRHPresent || g.SL != 3 || g.LID != 5 || g.QPN != ibmad.QP1 {
		t.Errorf("to a hop before the destination: %+v", g)
	}
	if g := a.GMPAddress(5, true); !g.GRHPresent || g.GID != there || g.HopLimit != 9 || g.TClass != 1 || g.FlowLabel != 2 {
		t.Errorf("to the destination: %+v", g)
	}
	if g := a.SMPAddress(5); g.GRHPresent || g.SL != 3 || g.QPN != ibmad.QP0 {
		t.Errorf("an SMP: %+v", g)
	}
}
