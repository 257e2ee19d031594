package fleet

import (
	"context"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/collector/config"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// simInventory is the SA inventory of the built-in fabric f, attached at
// node, with a short timeout (the fabric answers in microseconds).
func simInventory(t *testing.T, f *sim.Fabric, node string) LIDInventory {
	t.Helper()
	tp, err := f.Attach(node, 0)
	if err != nil {
		t.Fatal(err)
	}
	eng := ibmad.NewEngine(tp, ibmad.Options{Timeout: 20 * time.Millisecond, Retries: 1})
	t.Cleanup(func() { eng.Close() })
	return SAInventory(eng).(LIDInventory)
}

func fatTree(t *testing.T, lmc uint8) *sim.Fabric {
	t.Helper()
	topo, err := sim.FatTree2(2, 2, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	f, err := sim.New(topo, sim.Options{LMC: lmc})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// caLIDs is every CA port's base LID of f, but node's.
func caLIDs(t *testing.T, f *sim.Fabric, node string) map[uint16]string {
	t.Helper()
	out := map[uint16]string{}
	for _, n := range f.Nodes() {
		if n.IsSwitch() || n.Name == node {
			continue
		}
		lid, err := f.LIDOf(n.Name, 0)
		if err != nil {
			t.Fatal(err)
		}
		out[lid] = n.Name
	}
	return out
}

// portsByLID asks inv for every LID up to its top and returns the CA
// ports found at their base LIDs.
func portsByLID(t *testing.T, inv LIDInventory) map[uint16]string {
	t.Helper()
	ctx := context.Background()
	top, err := inv.Top(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[uint16]string{}
	for lid := uint16(1); lid <= top; lid++ {
		p, ok, err := inv.PortAt(ctx, lid)
		if err != nil {
			t.Fatalf("LID %d: %v", lid, err)
		}
		if ok && p.NodeType == ibmad.NodeTypeCA && p.LID == lid {
			out[lid] = p.NodeDesc
		}
	}
	return out
}

// TestSampleByLIDSeesPortsBehindABrokenLink: an SMP to a live port whose
// way is black-holed (a dead link), or that the port does not answer
// (M_Key on every SMA: an exporter on a switch's port 0), gets no answer;
// that is not an empty LID. The SA's NodeRecord says what is there, so
// the port is sampled and its trace says what is broken (found in
// review: such ports were taken for empty LIDs for a whole refresh).
func TestSampleByLIDSeesPortsBehindABrokenLink(t *testing.T) {
	t.Run("dead link", func(t *testing.T) {
		f := fatTree(t, 0)
		if err := f.SetDropRate("L0", 4, 1.0); err != nil {
			t.Fatal(err)
		}
		got, want := portsByLID(t, simInventory(t, f, "H0-0")), caLIDs(t, f, "")
		if len(got) != len(want) {
			t.Fatalf("by LID %v, want every CA port %v", got, want)
		}
	})
	t.Run("M_Key, from a switch", func(t *testing.T) {
		f := fatTree(t, 0)
		f.SetSMPMKeyProtect(true)
		got, want := portsByLID(t, simInventory(t, f, "L0")), caLIDs(t, f, "")
		if len(got) != len(want) {
			t.Fatalf("by LID %v, want every CA port %v", got, want)
		}
	})
}

// TestSampleByLIDNonBaseLIDs: with LMC 2 a port answers at four LIDs;
// only its base LID is a destination, and the other three cost no
// NodeDescription.
func TestSampleByLIDNonBaseLIDs(t *testing.T) {
	f := fatTree(t, 2)
	got, want := portsByLID(t, simInventory(t, f, "H0-0")), caLIDs(t, f, "")
	if len(got) != len(want) {
		t.Fatalf("by LID %v, want the base LIDs %v", got, want)
	}
	for lid := range got {
		if want[lid] == "" {
			t.Errorf("LID %d is not a base LID", lid)
		}
	}
}

// TestSampleByLIDTakesAMovedPortOnce: a port whose LID changed while the
// answer for its old LID is kept is taken once, at its new LID.
func TestSampleByLIDTakesAMovedPortOnce(t *testing.T) {
	now := time.Unix(1800000000, 0)
	p := caPort(0x300, 1, 6, "host3")
	old := p
	old.LID = 3
	s := lidSampler{top: 6, topAt: now, seen: map[uint16]lidAnswer{
		3: {port: old, ca: true, at: now.Add(-time.Minute)},
		6: {port: p, ca: true, at: now},
	}}
	for lid := uint16(1); lid <= 6; lid++ {
		if _, ok := s.seen[lid]; !ok {
			s.seen[lid] = lidAnswer{at: now}
		}
	}
	sel := &config.Selector{All: true, Sample: 4, Rotate: config.Duration(time.Hour), Refresh: config.Duration(time.Hour)}
	got, err := s.pass(context.Background(), &lidFabric{top: 6}, sel, 0, "seed", 0, now)
	if err != nil || len(got) != 1 || got[0].LID != 6 {
		t.Fatalf("%+v %v: want host3 once, at LID 6", got, err)
	}
}
