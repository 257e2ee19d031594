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

// forward takes a LID-routed request that reached r's node in subnet f
// with a GRH for another subnet's prefix (Fabric.leavesSubnet), and
// passes it on to that subnet. What the router does not pass on it
// drops, and the requester times out. The caller holds f.mu for reading;
// the far subnet is entered without it, so that no two fabrics' locks
// are ever held at once.
func (r *Router) forward(f *Fabric, t *Transport, p *ibmad.Packet, tid uint64, hops int) {
	a := p.Addr
	near, far := r.far(f)
	if r.off.Load() || a.HopLimit <= 1 || far.f.opts.GIDPrefix != a.GID.Prefix() || p.MAD.MgmtClass() != ibmad.ClassSubnAdm {
		r.dropped.Add(1)
		return
	}
	m := p.MAD
	go r.pass(t, m, tid, t.port.LID, hops, near, far, a)
}

// pass carries request m from the router into the far subnet, has that
// subnet's SA answer it when the GRH names the SA's well-known GID (or
// the SM node's port), and carries the answer back to the requester t,
// whose LID is slid, with a GRH from the far SA.
func (r *Router) pass(t *Transport, m ibmad.MAD, tid uint64, slid uint16, hops int, near, far routerSide, a ibmad.Address) {
	ff := far.f
	resp, farHops, ok := far.answer(t, &m, tid, a.GID.GUID())
	if !ok {
		r.dropped.Add(1)
		return
	}
	f := near.f
	f.mu.RLock()
	node, _, backHops, ok := f.lidRoute(routerPort(near.node), slid, nil)
	f.mu.RUnlock()
	if !ok || node != t.node {
		r.dropped.Add(1)
		return
	}
	r.forwarded.Add(1)
	pk := t.packet()
	*pk = ibmad.Packet{MAD: resp, Addr: ibmad.Address{LID: a.LID, QPN: a.QPN, QKey: a.QKey, SL: a.SL,
		GRHPresent: true, HopLimit: routedHopLimit, GID: ibmad.MakeGID(ff.opts.GIDPrefix, SAWellKnownGUID)}}
	f.deliver(t, pk, hops+farHops+backHops)
}

// answer delivers m from the router's port in s's subnet to the SA,
// which answers it, and returns the answer once it is back at the router.
// guid is the interface ID of the GRH's DGID: the SA's well-known one, or
// a port GUID of the SM node.
func (s routerSide) answer(t *Transport, m *ibmad.MAD, tid uint64, guid ibmad.GUID) (ibmad.MAD, int, bool) {
	f, rt := s.f, s.node
	f.mu.RLock()
	defer f.mu.RUnlock()
	smLID := f.smLIDLocked()
	if p := f.portGUID[guid]; guid != SAWellKnownGUID && (p == nil || p.Node != f.sm) {
		return ibmad.MAD{}, 0, false // only the SA answers across the router here
	}
	out := routerPort(rt)
	node, in, there, ok := f.lidRoute(out, smLID, nil)
	if !ok || node != f.sm || node.silent.Load() {
		return ibmad.MAD{}, 0, false
	}
	f.mads.Add(1)
	resp := *m
	resp.SetTID(tid)
	if !f.sa.answer(t, &resp) {
		return ibmad.MAD{}, 0, false
	}
	back := in
	if node.IsSwitch() {
		back = node.Ports[0]
	}
	rnode, _, home, ok := f.lidRoute(back, out.LID, nil)
	if !ok || rnode != rt {
		return ibmad.MAD{}, 0, false
	}
	return resp, there + home, true
}
