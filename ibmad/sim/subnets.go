package sim

import (
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// The GID prefixes, router and GUIDs of the two-subnet fabrics built here
// (the demo's --sim.remote-subnet, and package simtest's TwoSubnets).
// Routed subnets need prefixes of their own: a link-local (fe80::/10) GID
// does not cross a router.
const (
	LocalSubnetPrefix  uint64 = 0xfec0_0000_0000_000a
	RemoteSubnetPrefix uint64 = 0xfec0_0000_0000_000b
	// RouterGUID is the node GUID of the router joining them (ports
	// RouterGUID+1 in the local subnet, +2 in the remote one).
	RouterGUID ibmad.GUID = 0x0002c903_00300000
	// remote subnet's GUID bases, apart from the ibsim defaults the local
	// subnet's topology uses, as GUIDs are unique across subnets.
	remoteCAGUIDBase     = 0x0002c903_00110000
	remoteSwitchGUIDBase = 0x0002c903_00210000
)

// AttachRouter adds router node name (two ports) to t and cables its
// port 1 to a port added to switch sw: the subnet's side of a router
// whose port 2 lies in another subnet (RemoteSubnet, JoinSubnets).
// Adding a port keeps every existing port number and link.
func AttachRouter(t *Topology, name, sw string) error {
	s := t.Node(sw)
	if s == nil || s.Type != ibmad.NodeTypeSwitch {
		return fmt.Errorf("sim: attach router %q: %q is not a switch of the topology", name, sw)
	}
	if s.NumPorts >= 254 {
		return fmt.Errorf("sim: attach router %q: switch %q has no room for another port", name, sw)
	}
	r, err := t.AddNode(ibmad.NodeTypeRouter, name, 2)
	if err != nil {
		return fmt.Errorf("sim: attach router: %w", err)
	}
	r.GUID = RouterGUID
	r.Desc = name + " router"
	s.NumPorts++
	s.Links = append(s.Links, LinkEnd{})
	return t.Connect(name, 1, sw, s.NumPorts)
}

// RemoteSubnet is the topology of the subnet behind router name: leaves
// R-L0 and R-L1 under spine R-S0, hosts R-H0 and R-H1 on R-L0, R-H2 and
// R-H3 on R-L1, and the router's port 2 on R-L1, so a path from the
// router to R-H0 crosses the spine. Its SM runs on R-H0.
func RemoteSubnet(name string) *Topology {
	t := NewTopology("remote subnet")
	sw := ibmad.GUID(remoteSwitchGUIDBase)
	add := func(typ ibmad.NodeType, id string, ports int, guid ibmad.GUID) {
		n, err := t.AddNode(typ, id, ports)
		mustErr(err)
		n.GUID = guid
	}
	add(ibmad.NodeTypeSwitch, "R-S0", 2, sw)
	add(ibmad.NodeTypeSwitch, "R-L0", 3, sw+1)
	add(ibmad.NodeTypeSwitch, "R-L1", 4, sw+2)
	for h := 0; h < 4; h++ {
		add(ibmad.NodeTypeCA, fmt.Sprintf("R-H%d", h), 1, ibmad.GUID(remoteCAGUIDBase+uint64(h)*2))
		mustErr(t.Connect(fmt.Sprintf("R-L%d", h/2), h%2+1, fmt.Sprintf("R-H%d", h), 1))
	}
	mustErr(t.Connect("R-L0", 3, "R-S0", 1))
	mustErr(t.Connect("R-L1", 3, "R-S0", 2))
	add(ibmad.NodeTypeRouter, name, 2, RouterGUID)
	t.Node(name).Desc = name + " router"
	mustErr(t.Connect(name, 2, "R-L1", 4))
	return t
}

// JoinRemoteSubnet builds RemoteSubnet behind router name, which local's
// topology already holds (AttachRouter), with the given options (its GID
// prefix: RemoteSubnetPrefix; its SM: R-H0), and joins the two.
func JoinRemoteSubnet(local *Fabric, name string, opts Options) (*Fabric, *Router, error) {
	opts.GIDPrefix, opts.SMNode = RemoteSubnetPrefix, "R-H0"
	remote, err := New(RemoteSubnet(name), opts)
	if err != nil {
		return nil, nil, err
	}
	r, err := JoinSubnets(local, remote, name)
	if err != nil {
		return nil, nil, err
	}
	return remote, r, nil
}
