package ibopen

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// shape is a topology as its nodes in order (type, name, ports) and every
// port's far end: what the simulated fabric builds from it.
func shape(t *sim.Topology) string {
	var b strings.Builder
	for _, n := range t.Nodes {
		fmt.Fprintf(&b, "%s %s %d:", n.Type, n.Name, n.NumPorts)
		for p, l := range n.Links {
			if p > 0 && l.Peer != "" {
				fmt.Fprintf(&b, " %d>%s[%d]", p, l.Peer, l.Port)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// --sim.fattree builds the fabric the topology file of the same fat tree
// describes (fattree-4x2x4.net: 4 leaves, 2 spines, 4 hosts per leaf), so
// the benchmarks need no file from outside the repository.
func TestSimFatTreeIsTheFile(t *testing.T) {
	file, err := sim.LoadTopology(filepath.Join("..", "..", "testdata", "topologies", "fattree-4x2x4.net"))
	if err != nil {
		t.Fatal(err)
	}
	built, err := fatTree("4,2,4")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := shape(built), shape(file); got != want {
		t.Fatalf("--sim.fattree 4,2,4:\n%s\nfattree-4x2x4.net:\n%s", got, want)
	}
	for _, bad := range []string{"", "4,2", "4,2,4,1,1", "4,x,4", "0,2,4", "4,2,-1", "200,200,200"} {
		if _, err := fatTree(bad); err == nil || !strings.Contains(err.Error(), "--sim.fattree") {
			t.Errorf("--sim.fattree %q: %v, want an error naming the flag", bad, err)
		}
	}
	c := Config{SimTopology: "x.net", SimFatTree: "4,2,4"}
	if _, err := c.OpenFabric(); err == nil {
		t.Error("--sim.topology with --sim.fattree: no error")
	}
}
