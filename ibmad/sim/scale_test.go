package sim

import (
	"math/rand/v2"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// TestFatTree3ScaleRoutes builds the 11,664-host three-level fat tree and
// checks that LID-routed SMPs from a host reach 300 random LIDs, each
// answered by the node that owns it, and that routes are min-hop: from a
// host, at most 5 switches to any other host.
func TestFatTree3ScaleRoutes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an 11,664-host fabric")
	}
	topo, err := FatTree3(36, 18)
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(topo, Options{})
	if err != nil {
		t.Fatal(err)
	}
	lids := f.CALIDs()
	if len(lids) < 10000 {
		t.Fatalf("%d CA ports, want >= 10,000", len(lids))
	}
	c := attach(t, f, "H5-3-7")
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 300; i++ {
		lid := lids[rng.IntN(len(lids))]
		ni, err := c.lidNodeInfo(lid)
		if err != nil {
			t.Fatalf("LID %d: %v", lid, err)
		}
		if want := f.PortByLID(lid).Node.GUID; ni.NodeGUID != want {
			t.Fatalf("LID %d answered by %s, want %s", lid, ni.NodeGUID, want)
		}
		// Walk the programmed tables: host -> edge -> ... -> destination.
		sw := f.Node("H5-3-7").Ports[1].Remote.Node
		hops := 1
		for sw.IsSwitch() {
			out := f.LFT(sw.Name)[lid]
			if out == ibmad.LFTNoRoute || out == 0 {
				t.Fatalf("LID %d: no route at %s", lid, sw.Name)
			}
			sw = sw.Ports[out].Remote.Node
			hops++
		}
		if hops > 6 {
			t.Fatalf("LID %d: %d links, a k-ary fat tree needs at most 6", lid, hops)
		}
	}
}
