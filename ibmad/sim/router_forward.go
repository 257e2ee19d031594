package sim

import "github.com/ibtracer/ibtracer_exporter/ibmad"

// routeGMP takes a LID-routed request that reached router node n of f
// with a GRH for another subnet's prefix, and passes it on to that
// subnet (router.go): false when the GRH names this subnet (the router
// node answers as an end node). What the router does not pass on it
// drops, and the requester times out. The caller holds f.mu for reading;
// the far subnet is entered without it, so that no two fabrics' locks
// are ever held at once.
func (f *Fabric) routeGMP(t *Transport, p *ibmad.Packet, tid uint64, n *Node, hops int) bool {
	a := p.Addr
	if !a.GRHPresent || a.GID.Prefix() == f.opts.GIDPrefix || a.GID.Prefix()&0xFFC0_0000_0000_0000 == 0xFE80_0000_0000_0000 {
		return false
	}
	r := f.routerOfNode(n)
	if r == nil {
		return true // a router that joins nothing here
	}
	near, far := r.far(f)
	if r.off.Load() || a.HopLimit <= 1 || far.f.opts.GIDPrefix != a.GID.Prefix() || p.MAD.MgmtClass() != ibmad.ClassSubnAdm {
		r.dropped.Add(1)
		return true
	}
	m := p.MAD
	go r.pass(t, m, tid, t.port.LID, hops, near, far, a)
	return true
}

// pass carries request m from the router into the far subnet, has that
// subnet's SA answer it when the GRH names the SA's well-known GID (or
// the SM node's port), and carries the answer back to the requester t,
// whose LID is slid, with a GRH from the far SA.
func (r *Router) pass(t *Transport, m ibmad.MAD, tid uint64, slid uint16, hops int, near, far routerSide, a ibmad.Address) {
	ff := far.f
	resp, farHops, ok := ff.answerRouted(t, &m, tid, far.node, a.GID.GUID())
	if !ok {
		r.dropped.Add(1)
		return
	}
	f := near.f
	f.mu.RLock()
	node, _, backHops, ok := f.lidRoute(routerPort(near.node), slid)
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

// answerRouted delivers m from router node rt's port in f to the SA,
// which answers it, and returns the answer once it is back at the router.
// guid is the interface ID of the GRH's DGID: the SA's well-known one, or
// a port GUID of the SM node.
func (f *Fabric) answerRouted(t *Transport, m *ibmad.MAD, tid uint64, rt *Node, guid ibmad.GUID) (ibmad.MAD, int, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	smLID := f.smLIDLocked()
	if p := f.portGUID[guid]; guid != SAWellKnownGUID && (p == nil || p.Node != f.sm) {
		return ibmad.MAD{}, 0, false // only the SA answers across the router here
	}
	out := routerPort(rt)
	node, in, there, ok := f.lidRoute(out, smLID)
	if !ok || node != f.sm || node.silent.Load() {
		return ibmad.MAD{}, 0, false
	}
	f.mads.Add(1)
	resp := *m
	resp.SetTID(tid)
	if !f.sa(t, &resp) {
		return ibmad.MAD{}, 0, false
	}
	back := in
	if node.IsSwitch() {
		back = node.Ports[0]
	}
	rnode, _, home, ok := f.lidRoute(back, out.LID)
	if !ok || rnode != rt {
		return ibmad.MAD{}, 0, false
	}
	return resp, there + home, true
}
