package sim

import (
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

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
