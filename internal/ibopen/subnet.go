package ibopen

import (
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// RemoteRouter is the router --sim.remote-subnet adds to the simulated
// fabric, on its last switch, and the node that joins the second subnet
// (sim.RemoteSubnet) behind it.
const RemoteRouter = "R0"

// withRouter prepares topo for --sim.remote-subnet: router RemoteRouter
// on the topology's last switch (in a fat tree, a leaf: the path from a
// host of another leaf crosses a spine), and the routed subnet prefix.
func withRouter(topo *sim.Topology, opts *sim.Options) error {
	var last string
	for _, n := range topo.Nodes {
		if n.Type == ibmad.NodeTypeSwitch {
			last = n.Name
		}
	}
	if last == "" {
		return fmt.Errorf("--sim.remote-subnet: the topology has no switch to put router %s on", RemoteRouter)
	}
	if err := sim.AttachRouter(topo, RemoteRouter, last); err != nil {
		return fmt.Errorf("--sim.remote-subnet: %w", err)
	}
	opts.GIDPrefix = sim.LocalSubnetPrefix
	return nil
}

// joinRemote builds the second subnet behind the router and joins it to
// f; forwarding false is --sim.router-down's fault.
func joinRemote(f *sim.Fabric, opts sim.Options, forwarding bool) error {
	_, r, err := sim.JoinRemoteSubnet(f, RemoteRouter, opts)
	if err != nil {
		return fmt.Errorf("--sim.remote-subnet: %w", err)
	}
	r.SetForwarding(forwarding)
	return nil
}
