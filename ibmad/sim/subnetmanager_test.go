package sim

import (
	"math/rand/v2"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

func TestRoutesSpreadOverSpinesAndParallelLinks(t *testing.T) {
	// fattree-mini: two leaves, two spines, two parallel links per pair.
	f := mustFabric(t, "fattree-mini.net", Options{})
	lft := f.LFT("L0")
	used := map[uint8]int{}
	for _, h := range []string{"H1-0", "H1-1", "H1-2"} {
		lid, _ := f.LIDOf(h, 1)
		used[lft[lid]]++
	}
	if len(used) != 3 {
		t.Fatalf("L0 sends L1's three hosts over %v; want three different uplinks", used)
	}
	spines := map[string]bool{}
	for port := range used {
		spines[f.Node("L0").Ports[port].Remote.Node.Name] = true
	}
	if len(spines) != 2 {
		t.Fatalf("L1's hosts leave L0 through %v, want both spines", spines)
	}
	// The 128-host tree: every leaf spreads the other leaves' hosts evenly
	// over its 8 uplinks (120 remote hosts: 15 each).
	f = mustFabric(t, "fattree-128.net", Options{})
	for _, leaf := range []string{"L0", "L7", "L15"} {
		lft := f.LFT(leaf)
		count := map[uint8]int{}
		for _, lid := range f.CALIDs() {
			p := f.PortByLID(lid)
			if p.Remote.Node.Name != leaf {
				count[lft[lid]]++
			}
		}
		for port, n := range count {
			if n != 15 {
				t.Fatalf("%s: uplink %d carries %d hosts (%v), want 15 each", leaf, port, n, count)
			}
		}
	}
}

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
