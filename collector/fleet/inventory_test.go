package fleet

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

func inventoryKeys(ps []InventoryPort) []string {
	var out []string
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%s %#x port %d lid %d %q", p.NodeType, p.PortGUID, p.Port, p.LID, p.NodeDesc))
	}
	sort.Strings(out)
	return out
}

// The SA inventory on the in-process sim (whose GetTable answers are
// segmented with RMPP) lists every switch and CA port of the fabric.
func TestSAInventoryOnSim(t *testing.T) {
	topo, _ := sim.FatTree2(3, 2, 4, 1)
	f, _ := sim.New(topo, sim.Options{})
	tr, err := f.Attach("H1-2", 0)
	if err != nil {
		t.Fatal(err)
	}
	eng := ibmad.NewEngine(tr, ibmad.Options{})
	defer eng.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, err := SAInventory(eng).Ports(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := simPorts(f)
	if g, w := strings.Join(inventoryKeys(got), "\n"), strings.Join(inventoryKeys(want), "\n"); g != w {
		t.Fatalf("SA inventory:\n%s\nwant (the fabric):\n%s", g, w)
	}
	if len(got) != 3+2+3*4 {
		t.Fatalf("%d ports", len(got))
	}
}

// simPorts is the SA's view of a simulated fabric: every active port, as
// NodeRecords joined with PortInfoRecords would give it.
func simPorts(f *sim.Fabric) []InventoryPort {
	var ports []InventoryPort
	for _, n := range f.Nodes() {
		for num, p := range n.Ports {
			if p == nil || (num == 0 && !n.IsSwitch()) || p.LID == 0 {
				continue
			}
			ports = append(ports, InventoryPort{NodeGUID: uint64(n.GUID), PortGUID: uint64(p.GUID), LID: p.LID,
				Port: uint8(num), NodeType: n.Type, NodeDesc: n.Desc})
		}
	}
	return ports
}
