package sim

import (
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/internal/fakeclock"
)

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
