package sim

import (
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/internal/fakeclock"
)

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
