package collector

import (
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// simAt builds the two-level fat tree FatTree2(leaves, spines, hosts, 1)
// in process and returns it with an engine attached at H0-0, closed when
// the test ends.
func simAt(t testing.TB, leaves, spines, hosts int) (*sim.Fabric, *ibmad.Engine) {
	t.Helper()
	f := fatTree(t, leaves, spines, hosts)
	tr, err := f.Attach("H0-0", 0)
	if err != nil {
		t.Fatal(err)
	}
	eng := ibmad.NewEngine(tr, ibmad.Options{})
	t.Cleanup(func() { eng.Close() })
	return f, eng
}

// fatTree builds the two-level fat tree FatTree2(leaves, spines, hosts, 1)
// in process.
func fatTree(t testing.TB, leaves, spines, hosts int) *sim.Fabric {
	t.Helper()
	topo, err := sim.FatTree2(leaves, spines, hosts, 1)
	if err != nil {
		t.Fatal(err)
	}
	f, err := sim.New(topo, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return f
}
