package sim

import (
	"fmt"
	"sync/atomic"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// SAWellKnownGUID is the interface ID of the SA's well-known GID: a MAD
// for the SA of another subnet is addressed to that subnet's prefix and
// this interface ID (the Linux kernel's IB_SA_WELL_KNOWN_GUID; see
// docs/protocol.md, "Paths that leave the subnet").
const SAWellKnownGUID ibmad.GUID = 1<<57 | 2

// routedHopLimit is the hop limit the simulated SAs put in a PathRecord
// that leaves the subnet: anything above 1 says "global, send a GRH";
// the value is the simulator's choice (docs/protocol.md).
const routedHopLimit = 64

// Router joins two simulated subnets: one router node, present in both
// fabrics with the same node GUID, its linked ports in one subnet facing
// that subnet. Each subnet's SA answers a PathRecord to a GID of the
// other subnet's prefix with the router port's LID, and the router passes
// a LID-routed GMP that carries a GRH for the other prefix on to the
// other subnet: to the port the GRH's DGID names, or to the SA when it
// names the SA's well-known GID. Only the SA answers there (other classes
// are dropped; SMPs never cross a router). No independent peer checks
// this model: ibsim has no routers (docs/architecture.md).
type Router struct {
	Name  string
	GUID  ibmad.GUID
	sides [2]routerSide

	off       atomic.Bool   // fault: forwards nothing (SetForwarding)
	forwarded atomic.Uint64 // GMPs passed to the other subnet
	dropped   atomic.Uint64 // GMPs it did not pass on
}

// routerSide is the router as one subnet sees it.
type routerSide struct {
	f    *Fabric
	node *Node
}

// JoinSubnets joins fabrics a and b through the router node named name,
// which both topologies must hold as a router (Rt) with the same node
// GUID and at least one linked port; the two subnets must have different
// GID prefixes.
func JoinSubnets(a, b *Fabric, name string) (*Router, error) {
	if a == b {
		return nil, fmt.Errorf("sim: a router joins two different fabrics")
	}
	if a.opts.GIDPrefix == b.opts.GIDPrefix {
		return nil, fmt.Errorf("sim: both subnets have GID prefix %#x; give each its own (Options.GIDPrefix)", a.opts.GIDPrefix)
	}
	r := &Router{Name: name}
	for i, f := range []*Fabric{a, b} {
		n := f.byName[name]
		if n == nil || n.Type != ibmad.NodeTypeRouter {
			return nil, fmt.Errorf("sim: subnet %#x has no router node %q", f.opts.GIDPrefix, name)
		}
		if routerPort(n) == nil {
			return nil, fmt.Errorf("sim: router %q has no linked port in subnet %#x", name, f.opts.GIDPrefix)
		}
		r.sides[i] = routerSide{f: f, node: n}
	}
	if a.byName[name].GUID != b.byName[name].GUID {
		return nil, fmt.Errorf("sim: router %q has node GUID %s in one subnet and %s in the other", name,
			a.byName[name].GUID, b.byName[name].GUID)
	}
	r.GUID = a.byName[name].GUID
	for _, f := range []*Fabric{a, b} {
		f.mu.Lock()
		f.routers = append(f.routers, r)
		f.mu.Unlock()
	}
	return r, nil
}

// SetForwarding turns the router's forwarding on or off (fault: a router
// that passes nothing between the subnets).
func (r *Router) SetForwarding(on bool) { r.off.Store(!on) }

// Forwarded returns how many GMPs the router passed to the other subnet.
func (r *Router) Forwarded() uint64 { return r.forwarded.Load() }

// Dropped returns how many GMPs for the other subnet it did not pass on.
func (r *Router) Dropped() uint64 { return r.dropped.Load() }

// Port returns the router's linked port in f's subnet (nil: f is not one
// of its subnets).
func (r *Router) Port(f *Fabric) *Port {
	for _, s := range r.sides {
		if s.f == f {
			return routerPort(s.node)
		}
	}
	return nil
}

// routerPort is the router node's first linked port with a LID in its
// subnet, where that subnet's traffic for the other subnet goes.
func routerPort(n *Node) *Port {
	for _, p := range n.Ports[1:] {
		if p.Remote != nil {
			return p
		}
	}
	return nil
}

// far returns the side of r that is not f's, and f's own.
func (r *Router) far(f *Fabric) (near, far routerSide) {
	if r.sides[0].f == f {
		return r.sides[0], r.sides[1]
	}
	return r.sides[1], r.sides[0]
}

// routerFor returns the router of f that reaches prefix, or nil. The
// caller holds f.mu for reading.
func (f *Fabric) routerFor(prefix uint64) *Router {
	for _, r := range f.routers {
		if _, far := r.far(f); far.f.opts.GIDPrefix == prefix {
			return r
		}
	}
	return nil
}

// routerOfNode returns the router whose node n is, or nil. The caller
// holds f.mu for reading.
func (f *Fabric) routerOfNode(n *Node) *Router {
	for _, r := range f.routers {
		if near, _ := r.far(f); near.node == n {
			return r
		}
	}
	return nil
}

// routedPath answers a PathRecord Get between a port of this subnet and
// a GID of a subnet a router reaches, as the openib-general routing
// discussion has each subnet's SA do (docs/protocol.md): the record runs
// from the local port to the foreign GID, its DLID is the router port's
// LID, and its hop limit above 1 says a GRH is needed. The local port is
// the one the request's SGID (or SLID) or DGID names, whichever is
// local. ok is false when neither end is a foreign GID this subnet has a
// router for (the ordinary answer applies). The caller holds f.mu for
// reading.
func (f *Fabric) routedPath(q *ibmad.PathRecord, mask uint64) (pr ibmad.PathRecord, status uint8, ok bool) {
	foreign := func(bit uint64, g ibmad.GID) *Router {
		if mask&bit == 0 || g.Prefix() == f.opts.GIDPrefix || g.Prefix()&0xFFC0_0000_0000_0000 == 0xFE80_0000_0000_0000 {
			return nil
		}
		return f.routerFor(g.Prefix())
	}
	var local *Port
	var remote ibmad.GID
	r := foreign(ibmad.PRCompDGID, q.DGID)
	switch {
	case r != nil:
		remote = q.DGID
		local = f.localEnd(q.SGID, q.SLID, mask&ibmad.PRCompSGID != 0, mask&ibmad.PRCompSLID != 0)
	default:
		if r = foreign(ibmad.PRCompSGID, q.SGID); r == nil {
			return pr, 0, false
		}
		// A source in another subnet: OpenSM answers "invalid GID"
		// (non-local SGID subnet prefix); the path back is asked with
		// the SGID in this subnet (docs/protocol.md, "Paths that leave
		// the subnet").
		return pr, ibmad.SAStatusInvalidGID, true
	}
	rp := r.Port(f)
	if local == nil || local.LID == 0 || !(local.Num == 0 || local.linkUp()) || rp == nil || rp.LID == 0 || !rp.linkUp() {
		return pr, ibmad.SAStatusNoRecords, true
	}
	pr = ibmad.PathRecord{
		SGID: ibmad.MakeGID(f.opts.GIDPrefix, local.Node.portGUID(local.Num)), DGID: remote,
		SLID: local.LID, DLID: rp.LID, HopLimit: routedHopLimit, Reversible: true, NumbPath: 1, PKey: 0xFFFF,
		MTUSelector: 2, MTU: 5, RateSelector: 2, Rate: 7, PacketLifeTimeSelector: 2, PacketLifeTime: 18,
	}
	f.pathQoS(&pr, rp) // the SL and GRH fields SetPathQoS gives the router port (pathqos.go)
	return pr, 0, true
}

// localEnd is the local port a GID or LID names (the GID first), or nil.
func (f *Fabric) localEnd(g ibmad.GID, lid uint16, byGID, byLID bool) *Port {
	switch {
	case byGID:
		if g.Prefix() != f.opts.GIDPrefix && g.Prefix()&0xFFC0_0000_0000_0000 != 0xFE80_0000_0000_0000 {
			return nil
		}
		return f.portGUID[g.GUID()]
	case byLID && int(lid) < len(f.lids):
		return f.lids[lid]
	}
	return nil
}
