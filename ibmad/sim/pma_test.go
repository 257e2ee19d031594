package sim

import (
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/internal/fakeclock"
)

func readPortCounters(t *testing.T, c *client, lid uint16, port uint8) ibmad.PortCounters {
	t.Helper()
	q := ibmad.NewPerfMgtGet(ibmad.AttrPortCounters)
	q.Data[1] = port
	req := &ibmad.Request{Addr: ibmad.GSIAddress(lid, 0)}
	_ = q.MarshalTo(req.MAD[:])
	resp, err := c.do(req)
	if err != nil || resp.MAD.Status() != 0 {
		t.Fatalf("PortCounters %d/%d: %v %v", lid, port, err, resp.MAD.Status())
	}
	var pc ibmad.PortCounters
	_ = pc.UnmarshalBinary(resp.MAD.PerfMgtData())
	return pc
}

func TestPerfMgtCountersMove(t *testing.T) {
	f := mustFabric(t, "chain-5.net", Options{})
	c := attach(t, f, "hostA")
	s3, _ := f.LIDOf("s3", 0)
	hostB, _ := f.LIDOf("hostB", 1)
	before := readPortCounters(t, c, s3, 2) // s3 port 2 faces s4: on the way to hostB
	for i := 0; i < 10; i++ {
		if _, err := c.lidNodeInfo(hostB); err != nil {
			t.Fatal(err)
		}
	}
	after := readPortCounters(t, c, s3, 2)
	// 10 requests out of port 2, 10 responses in; the counter reads
	// themselves come in through port 1, not port 2.
	if after.PortXmitPkts-before.PortXmitPkts != 10 || after.PortRcvPkts-before.PortRcvPkts != 10 {
		t.Fatalf("xmit +%d rcv +%d, want +10 each", after.PortXmitPkts-before.PortXmitPkts, after.PortRcvPkts-before.PortRcvPkts)
	}
	if after.PortXmitData-before.PortXmitData != 10*madWords {
		t.Fatalf("xmit data +%d", after.PortXmitData-before.PortXmitData)
	}
}

// pmaAsk sends node's PMA a PerfMgt request of attr for port and returns
// the answer's status and data.
func pmaAsk(t *testing.T, f *Fabric, n *Node, meth ibmad.Method, attr ibmad.AttrID, port uint8) (ibmad.Status, []byte) {
	t.Helper()
	g := ibmad.NewPerfMgtGet(attr)
	g.Method = meth
	g.Data[1] = port
	var m ibmad.MAD
	if err := g.MarshalTo(m[:]); err != nil {
		t.Fatal(err)
	}
	n.pma.answer(&m)
	return m.Status(), m.PerfMgtData()
}

func TestXmitWaitRateClimbs(t *testing.T) {
	topo, _ := FatTree2(2, 2, 2, 1)
	f, err := New(topo, Options{})
	if err != nil {
		t.Fatal(err)
	}
	clk := fakeclock.New(time.Unix(1e9, 0))
	leaf := f.Node("L0")
	const port = 1
	if err := f.SetVLXmitWaitRate("L0", port, 3, 1000, clk.Now); err != nil {
		t.Fatal(err)
	}
	clk.Add(2500 * time.Millisecond)
	read := func() (ibmad.PortCounters, ibmad.PortCountersExtended, ibmad.PortVLXmitWaitCounters) {
		var pc ibmad.PortCounters
		var pce ibmad.PortCountersExtended
		var vl ibmad.PortVLXmitWaitCounters
		for _, a := range []struct {
			id  ibmad.AttrID
			out interface{ UnmarshalBinary([]byte) error }
		}{{ibmad.AttrPortCounters, &pc}, {ibmad.AttrPortCountersExtended, &pce}, {ibmad.AttrPortVLXmitWaitCounters, &vl}} {
			st, data := pmaAsk(t, f, leaf, ibmad.MethodGet, a.id, port)
			if st != ibmad.StatusOK {
				t.Fatalf("%s: status %v", ibmad.AttrName(ibmad.ClassPerfMgt, a.id), st)
			}
			if err := a.out.UnmarshalBinary(data); err != nil {
				t.Fatal(err)
			}
		}
		return pc, pce, vl
	}
	pc, pce, vl := read()
	if pc.PortXmitWait != 2500 || pce.PortXmitWait != 2500 || vl.PortVLXmitWait[3] != 2500 || vl.PortSelect != port {
		t.Fatalf("after 2.5 s at 1000/s: PortXmitWait %d, extended %d, VL3 %d (select %d)", pc.PortXmitWait,
			pce.PortXmitWait, vl.PortVLXmitWait[3], vl.PortSelect)
	}
	for i, v := range vl.PortVLXmitWait {
		if i != 3 && v != 0 {
			t.Fatalf("VL%d waits %d, want 0", i, v)
		}
	}
	// A new VL banks what the old climb counted.
	if err := f.SetXmitWaitRate("L0", port, 100, clk.Now); err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Second)
	pc, _, vl = read()
	if pc.PortXmitWait != 2600 || vl.PortVLXmitWait[3] != 2500 || vl.PortVLXmitWait[0] != 100 {
		t.Fatalf("after moving to VL0: PortXmitWait %d, VL3 %d, VL0 %d", pc.PortXmitWait, vl.PortVLXmitWait[3], vl.PortVLXmitWait[0])
	}
	// The 16-bit per-VL counters saturate; the 32-bit one does not yet.
	_ = f.SetXmitWaitRate("L0", port, 0, nil)
	_ = f.SetXmitWaitRate("L0", port, 1e5, clk.Now)
	clk.Add(time.Second)
	pc, _, vl = read()
	if pc.PortXmitWait != 102600 || vl.PortVLXmitWait[0] != 0xFFFF {
		t.Fatalf("saturation: PortXmitWait %d, VL0 %d", pc.PortXmitWait, vl.PortVLXmitWait[0])
	}
	// A Set clears the waits; the climb goes on from zero.
	if st, _ := pmaAsk(t, f, leaf, ibmad.MethodSet, ibmad.AttrPortCounters, port); st != ibmad.StatusOK {
		t.Fatalf("Set: %v", st)
	}
	clk.Add(10 * time.Millisecond)
	if pc, _, vl = read(); pc.PortXmitWait != 1000 || vl.PortVLXmitWait[0] != 1000 || vl.PortVLXmitWait[3] != 0 {
		t.Fatalf("after a Set: PortXmitWait %d, VL0 %d, VL3 %d", pc.PortXmitWait, vl.PortVLXmitWait[0], vl.PortVLXmitWait[3])
	}
	// Other ports do not wait.
	if st, data := pmaAsk(t, f, leaf, ibmad.MethodGet, ibmad.AttrPortCounters, 2); st != ibmad.StatusOK {
		t.Fatal(st)
	} else if err := pc.UnmarshalBinary(data); err != nil || pc.PortXmitWait != 0 {
		t.Fatalf("port 2: PortXmitWait %d (%v)", pc.PortXmitWait, err)
	}
	// A PMA without the attribute says so.
	if err := f.SetPMANoVLXmitWait("L0", true); err != nil {
		t.Fatal(err)
	}
	if st, _ := pmaAsk(t, f, leaf, ibmad.MethodGet, ibmad.AttrPortVLXmitWaitCounters, port); st != ibmad.StatusMethodAttrUnsupp {
		t.Fatalf("without the attribute: status %v", st)
	}
	for _, bad := range []error{f.SetXmitWaitRate("L0", port, -1, nil), f.SetVLXmitWaitRate("L0", port, 16, 1, nil),
		f.SetXmitWaitRate("L0", 99, 1, nil), f.SetPMANoVLXmitWait("nope", true)} {
		if bad == nil {
			t.Fatal("no error for a negative rate, VL 16, port 99 or an unknown node")
		}
	}
}

// TestPMAMisanswer: a misanswering PMA answers another port's counters,
// named by that port's PortSelect, and another attribute, named in the
// answer's header; repaired, it answers as asked.
func TestPMAMisanswer(t *testing.T) {
	topo, _ := FatTree2(2, 2, 2, 1)
	f, err := New(topo, Options{})
	if err != nil {
		t.Fatal(err)
	}
	clk := fakeclock.New(time.Unix(1e9, 0))
	leaf := f.Node("L0")
	if err := f.SetErrorRate("L0", 2, 10, clk.Now); err != nil {
		t.Fatal(err)
	}
	clk.Add(3 * time.Second) // port 2: 30 symbol errors; port 1: none
	if err := f.SetPMAMisanswer("L0", &PMAMisanswer{Ports: map[ibmad.AttrID]uint8{ibmad.AttrPortCounters: 2},
		Attrs: map[ibmad.AttrID]ibmad.AttrID{ibmad.AttrPortCountersExtended: ibmad.AttrPortCounters}}); err != nil {
		t.Fatal(err)
	}
	ask := func(attr ibmad.AttrID) (ibmad.AttrID, ibmad.PortCounters) {
		t.Helper()
		g := ibmad.NewPerfMgtGet(attr)
		g.Data[1] = 1
		var m ibmad.MAD
		if err := g.MarshalTo(m[:]); err != nil {
			t.Fatal(err)
		}
		leaf.pma.answer(&m)
		var pc ibmad.PortCounters
		if st := m.Status(); st != ibmad.StatusOK {
			t.Fatalf("%#x: status %v", attr, st)
		}
		if err := pc.UnmarshalBinary(m.PerfMgtData()); err != nil {
			t.Fatal(err)
		}
		return m.AttrID(), pc
	}
	id, pc := ask(ibmad.AttrPortCounters)
	if id != ibmad.AttrPortCounters || pc.PortSelect != 2 || pc.SymbolErrorCounter != 30 {
		t.Fatalf("PortCounters of port 1: attr %#x, PortSelect %d, SymbolErrorCounter %d; want port 2's (30)", id, pc.PortSelect, pc.SymbolErrorCounter)
	}
	if id, pc := ask(ibmad.AttrPortCountersExtended); id != ibmad.AttrPortCounters || pc.SymbolErrorCounter != 30 {
		t.Fatalf("PortCountersExtended answered as attr %#x, SymbolErrorCounter %d; want PortCounters of port 2", id, pc.SymbolErrorCounter)
	}
	if err := f.SetPMAMisanswer("L0", &PMAMisanswer{Ports: map[ibmad.AttrID]uint8{ibmad.AttrPortCounters: 200}}); err == nil {
		t.Fatal("a PortSelect beyond the node's ports was accepted")
	}
	if err := f.SetPMAMisanswer("L0", &PMAMisanswer{NoPortSelect: true}); err != nil {
		t.Fatal(err)
	}
	if id, pc := ask(ibmad.AttrPortCounters); id != ibmad.AttrPortCounters || pc.PortSelect != 0 || pc.SymbolErrorCounter != 0 {
		t.Fatalf("no PortSelect: attr %#x, PortSelect %d, SymbolErrorCounter %d; want port 1's counters, PortSelect 0", id, pc.PortSelect, pc.SymbolErrorCounter)
	}
	if err := f.SetPMAMisanswer("L0", nil); err != nil {
		t.Fatal(err)
	}
	if id, pc := ask(ibmad.AttrPortCounters); id != ibmad.AttrPortCounters || pc.PortSelect != 1 || pc.SymbolErrorCounter != 0 {
		t.Fatalf("repaired: attr %#x, PortSelect %d, SymbolErrorCounter %d", id, pc.PortSelect, pc.SymbolErrorCounter)
	}
}
