package sim

import (
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// FatTree2 builds a two-level fat tree: spines S<j>, leaves L<i>, hosts
// H<leaf>-<n>, and linksPerPair parallel cables between every leaf and
// spine, port for port as testdata/topologies/fattree-4x2x4.net lays one
// out (TestSimFatTreeIsTheFile, internal/ibopen). --sim.fattree builds it.
func FatTree2(leaves, spines, hostsPerLeaf, linksPerPair int) (*Topology, error) {
	if leaves < 1 || spines < 1 || hostsPerLeaf < 1 || linksPerPair < 1 {
		return nil, fmt.Errorf("fat tree: leaves, spines, hosts and links per pair must be >= 1")
	}
	leafPorts := hostsPerLeaf + spines*linksPerPair
	spinePorts := leaves * linksPerPair
	if leafPorts > 254 || spinePorts > 254 {
		return nil, fmt.Errorf("fat tree: switch radix %d/%d exceeds 254 ports", leafPorts, spinePorts)
	}
	t := NewTopology(fmt.Sprintf("fattree2(%d,%d,%d,%d)", leaves, spines, hostsPerLeaf, linksPerPair))
	for s := 0; s < spines; s++ {
		must(t.AddNode(ibmad.NodeTypeSwitch, fmt.Sprintf("S%d", s), spinePorts))
	}
	for l := 0; l < leaves; l++ {
		must(t.AddNode(ibmad.NodeTypeSwitch, fmt.Sprintf("L%d", l), leafPorts))
	}
	for l := 0; l < leaves; l++ {
		for h := 0; h < hostsPerLeaf; h++ {
			name := fmt.Sprintf("H%d-%d", l, h)
			must(t.AddNode(ibmad.NodeTypeCA, name, 1))
			mustErr(t.Connect(fmt.Sprintf("L%d", l), h+1, name, 1))
		}
		for s := 0; s < spines; s++ {
			for k := 0; k < linksPerPair; k++ {
				mustErr(t.Connect(fmt.Sprintf("L%d", l), hostsPerLeaf+s*linksPerPair+k+1,
					fmt.Sprintf("S%d", s), l*linksPerPair+k+1))
			}
		}
	}
	return t, nil
}

func must(_ *NodeSpec, err error) {
	if err != nil {
		panic(err) // builders only produce valid names and ports
	}
}

func mustErr(err error) {
	if err != nil {
		panic(err)
	}
}
