package sim

import (
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// FatTree2 builds the two-level fat tree that shared/tools/gen_fattree.py
// writes, with the same names: spines S<j>, leaves L<i>, hosts H<leaf>-<n>,
// and linksPerPair parallel cables between every leaf and spine.
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

// FatTree3 builds a three-level k-ary fat tree (k even): k pods of k/2 edge
// and k/2 aggregation switches, (k/2)^2 core switches, and hostsPerEdge
// single-port hosts on every edge switch (k/2 for a full tree: k^3/4 hosts).
// Names: core C<i>, aggregation A<pod>-<i>, edge E<pod>-<i>, hosts
// H<pod>-<edge>-<n>.
func FatTree3(k, hostsPerEdge int) (*Topology, error) {
	if k < 2 || k%2 != 0 || k > 254 {
		return nil, fmt.Errorf("fat tree: k=%d, want an even radix in 2..254", k)
	}
	if hostsPerEdge < 1 || hostsPerEdge+k/2 > 254 {
		return nil, fmt.Errorf("fat tree: %d hosts per edge switch does not fit", hostsPerEdge)
	}
	h := k / 2
	t := NewTopology(fmt.Sprintf("fattree3(k=%d,hosts=%d)", k, hostsPerEdge))
	for c := 0; c < h*h; c++ {
		must(t.AddNode(ibmad.NodeTypeSwitch, fmt.Sprintf("C%d", c), k))
	}
	for p := 0; p < k; p++ {
		for a := 0; a < h; a++ {
			must(t.AddNode(ibmad.NodeTypeSwitch, fmt.Sprintf("A%d-%d", p, a), k))
		}
		for e := 0; e < h; e++ {
			must(t.AddNode(ibmad.NodeTypeSwitch, fmt.Sprintf("E%d-%d", p, e), hostsPerEdge+h))
		}
	}
	for p := 0; p < k; p++ {
		for e := 0; e < h; e++ {
			edge := fmt.Sprintf("E%d-%d", p, e)
			for n := 0; n < hostsPerEdge; n++ {
				name := fmt.Sprintf("H%d-%d-%d", p, e, n)
				must(t.AddNode(ibmad.NodeTypeCA, name, 1))
				mustErr(t.Connect(edge, n+1, name, 1))
			}
			for a := 0; a < h; a++ { // edge up-port a -> agg a, down-port e+1
				mustErr(t.Connect(edge, hostsPerEdge+a+1, fmt.Sprintf("A%d-%d", p, a), e+1))
			}
		}
		for a := 0; a < h; a++ { // agg up-port j -> core a*h+j, port p+1
			for j := 0; j < h; j++ {
				mustErr(t.Connect(fmt.Sprintf("A%d-%d", p, a), h+j+1, fmt.Sprintf("C%d", a*h+j), p+1))
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
