// Package simtest builds the simulated fabrics that tests of several
// packages share, as net/http/httptest does for HTTP servers. Product code
// builds its fabrics with package sim directly.
//
// A test of a trace that leaves the subnet:
//
//	local, remote, router, err := simtest.TwoSubnets(sim.Options{})
//	...
//	dst := ibmad.MakeGID(sim.RemoteSubnetPrefix, simtest.RemoteHostGUID(0))
package simtest

import (
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// TwoSubnets builds a small two-subnet fabric: a two-level fat tree of
// two leaves, one spine and two hosts per leaf (prefix
// sim.LocalSubnetPrefix) with router "R0" on leaf L1, and sim.RemoteSubnet
// behind it. opts applies to both; their prefixes and SM nodes are set
// here.
func TwoSubnets(opts sim.Options) (local, remote *sim.Fabric, r *sim.Router, err error) {
	t, err := sim.FatTree2(2, 1, 2, 1)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := sim.AttachRouter(t, "R0", "L1"); err != nil {
		return nil, nil, nil, err
	}
	lo := opts
	lo.GIDPrefix, lo.SMNode = sim.LocalSubnetPrefix, ""
	if local, err = sim.New(t, lo); err != nil {
		return nil, nil, nil, err
	}
	remote, r, err = sim.JoinRemoteSubnet(local, "R0", opts)
	return local, remote, r, err
}

// RemoteHostGUID is the port GUID of host R-H<h> (0..3) of
// sim.RemoteSubnet.
func RemoteHostGUID(h int) ibmad.GUID {
	n := sim.RemoteSubnet("R0").Node(fmt.Sprintf("R-H%d", h))
	if n == nil {
		panic(fmt.Sprintf("simtest: the remote subnet has no host R-H%d", h))
	}
	return n.GUID + 1
}
