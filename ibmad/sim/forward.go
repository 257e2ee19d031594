package sim

import (
	"encoding/binary"
	"sync"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// maxLIDHops bounds LID-routed forwarding so that a routing loop (a
// diverging data plane can make one) drops the MAD instead of spinning.
const maxLIDHops = 64

// madWords is what one MAD adds to the data counters, in 4-octet units.
const madWords = ibmad.MADSize / 4

// cross moves the MAD of fl over the link from egress port out to its
// peer: counters move, and the port's drop fault may eat it (loss.go says
// how it draws). The caller checked that the link is up.
func (f *Fabric) cross(out *Port, fl *flight) bool {
	in := out.Remote
	out.ctr.xmitPkts.Add(1)
	out.ctr.xmitData.Add(madWords)
	if ppm := out.dropPPM.Load(); ppm != 0 && drawFor(f, fl, out) < ppm {
		in.ctr.rcvErrors.Add(1)
		in.ctr.symbolErrors.Add(1)
		return false
	}
	in.ctr.rcvPkts.Add(1)
	in.ctr.rcvData.Add(madWords)
	return true
}

// drawFor is the drop draw of the MAD of fl at port out (loss.go); a MAD
// without a flight (an RMPP segment, a router's far side) draws from the
// fabric's shared generator.
func drawFor(f *Fabric, fl *flight, out *Port) uint32 {
	if fl == nil {
		return f.random() % 1_000_000
	}
	return fl.draw(out)
}

// deliver hands p to t after hops link crossings' worth of latency.
func (f *Fabric) deliver(t *Transport, p *ibmad.Packet, hops int) {
	if d := f.opts.HopLatency; d > 0 && hops > 0 {
		time.AfterFunc(time.Duration(hops)*d, func() { t.enqueue(p) })
		return
	}
	t.enqueue(p)
}

// sendDR forwards a directed-route SMP request from t along its initial
// path, has the SMA at the end answer it, and returns the answer to t along
// the reverse path (IBA 14.2.2; ibsim direct_route_out_MAD). A bad path, a
// link that is down or a node that cannot forward drops the SMP, so the
// requester times out, as on a real fabric.
func (f *Fabric) sendDR(fl *flight, tid uint64) {
	t, p := fl.t, fl.p
	m := &p.MAD
	hops := int(m.DRHopCount())
	if hops > ibmad.MaxDRHops || m.DRHopPointer() != 0 ||
		binary.BigEndian.Uint16(m[32:]) != ibmad.PermissiveLID || binary.BigEndian.Uint16(m[34:]) != ibmad.PermissiveLID {
		return // LID-routed DR segments are not modelled (nor by ibsim)
	}
	var egress [ibmad.MaxDRHops + 1]*Port
	node, in := t.node, t.port
	var rpath [64]byte
	rpath[0] = t.port.Num
	for i := 1; i <= hops; i++ {
		if i > 1 && !node.IsSwitch() {
			return // a CA or router does not forward SMPs
		}
		outNum := m[128+i]
		if outNum == 0 || int(outNum) > node.NumPorts() {
			node.Ports[0].ctr.switchRelay.Add(1)
			return
		}
		out := node.Ports[outNum]
		if !out.linkUp() {
			out.ctr.xmitDiscards.Add(1)
			return
		}
		if !f.cross(out, fl) {
			return
		}
		egress[i] = out
		in = out.Remote
		node = in.Node
		rpath[i] = in.Num
	}
	if node.silent.Load() {
		return
	}
	// The way back crosses the same links in reverse.
	for i := hops; i >= 1; i-- {
		back := egress[i].Remote
		if !back.linkUp() || !f.cross(back, fl) {
			return
		}
	}
	r := t.packet()
	*r = ibmad.Packet{Addr: ibmad.DRAddress(), MAD: *m}
	rm := &r.MAD
	rm.SetTID(tid)
	node.answerSMP(in, rm)
	rm[4] |= 0x80 // D bit: on its way back (IBA 14.2.2)
	rm[6] = byte(hops)
	copy(rm[192:256], rpath[:])
	fl.delivered = true
	f.deliver(t, r, 2*hops)
}

// deliverResponse hands response p from t, which reached node through
// port in after hops links, to the transport there whose request it
// answers (by the upper 32 bits of tid); slid is the port it leaves from.
func (f *Fabric) deliverResponse(fl *flight, tid uint64, slid uint16, node *Node, in *Port, hops int) {
	t, p := fl.t, fl.p
	dst := node.transportByHiTID(uint32(tid >> 32))
	if dst == nil {
		return
	}
	fl.delivered = true
	r := dst.packet()
	*r = ibmad.Packet{MAD: p.MAD, Addr: ibmad.Address{LID: slid, QPN: p.Addr.QPN, QKey: p.Addr.QKey, SL: p.Addr.SL,
		PKeyIndex: p.Addr.PKeyIndex}, InPort: in.Num, InPortKnown: true}
	f.carryGRH(&r.Addr, &p.Addr, t.port)
	f.deliver(dst, r, hops)
}

// deliverToAgent hands request p from t, which reached node through port
// in after hops links, to the first transport there registered for it,
// and reports whether there was one.
func (f *Fabric) deliverToAgent(fl *flight, tid uint64, slid uint16, node *Node, in *Port, hops int) bool {
	t, p := fl.t, fl.p
	for _, dst := range node.transportList() {
		if !dst.accepts(&p.MAD) {
			continue
		}
		r := dst.packet()
		*r = ibmad.Packet{MAD: p.MAD, Addr: ibmad.Address{LID: slid, QPN: ibmad.QP1, QKey: ibmad.QP1QKey,
			SL: p.Addr.SL, PKeyIndex: p.Addr.PKeyIndex}, InPort: in.Num, InPortKnown: !node.hideIn.Load()}
		f.carryGRH(&r.Addr, &p.Addr, t.port)
		r.MAD.SetTID(tid)
		if in != dst.port && !node.IsSwitch() {
			dst.askedThrough(tid, in.LID)
		}
		fl.delivered = true
		f.deliver(dst, r, hops)
		return true
	}
	return false
}

// lidRoute forwards a LID-routed MAD from port from toward dlid through the
// switches' data planes (ibsim lid_route_MAD). It returns the node that
// accepts dlid, the port it arrived on (for a switch, the external port;
// from itself when dlid is local), and the links crossed.
// fl is the MAD's flight (nil: draws from the shared generator).
func (f *Fabric) lidRoute(from *Port, dlid uint16, fl *flight) (node *Node, in *Port, hops int, ok bool) {
	if dlid == 0 || dlid >= 0xC000 {
		return nil, nil, 0, false // no multicast or permissive here
	}
	node, in = from.Node, from
	if from.hasLID(dlid) {
		return node, from, 0, true
	}
	if !node.IsSwitch() {
		if !from.linkUp() {
			from.ctr.xmitDiscards.Add(1)
			return nil, nil, 0, false
		}
		if !f.cross(from, fl) {
			return nil, nil, 0, false
		}
		in = from.Remote
		node = in.Node
		hops++
	}
	for ; hops <= maxLIDHops; hops++ {
		if !node.IsSwitch() {
			for _, p := range node.Ports[1:] {
				if p == in && p.hasLID(dlid) {
					return node, in, hops, true
				}
			}
			return nil, nil, 0, false // a CA that is not the destination drops it
		}
		if node.Ports[0].hasLID(dlid) {
			return node, in, hops, true
		}
		outNum := node.forwardPort(dlid)
		if outNum == 0 || outNum == ibmad.LFTNoRoute || int(outNum) > node.NumPorts() {
			in.ctr.switchRelay.Add(1)
			return nil, nil, 0, false
		}
		out := node.Ports[outNum]
		if !out.linkUp() {
			out.ctr.xmitDiscards.Add(1)
			return nil, nil, 0, false
		}
		if !f.cross(out, fl) {
			return nil, nil, 0, false
		}
		in = out.Remote
		node = in.Node
	}
	return nil, nil, 0, false
}

// sendLID forwards a LID-routed MAD from t. Requests go to the destination
// node's SMA, SA, PMA or to a transport registered for their class there;
// responses go to the transport whose request they answer.
func (f *Fabric) sendLID(fl *flight, tid uint64, isResp bool) {
	t, p := fl.t, fl.p
	slid := t.port.LID
	if isResp {
		slid = t.answerFrom(tid)
	}
	node, in, hops, ok := f.lidRoute(t.port, p.Addr.LID, fl)
	if !ok || node.silent.Load() || !f.admits(&p.Addr, hops, node, in, p.MAD.MgmtClass().IsSMP()) {
		return
	}
	m := &p.MAD
	if isResp {
		f.deliverResponse(fl, tid, slid, node, in, hops)
		return
	}
	if node.Type == ibmad.NodeTypeRouter && f.leavesSubnet(&p.Addr) {
		if r := f.routerOfNode(node); r != nil {
			fl.delivered = true           // the far side's losses are not reported
			r.forward(f, t, p, tid, hops) // to the other subnet (router.go)
		}
		return // a router that joins nothing here drops it
	}
	class := m.MgmtClass()
	var answer func(*ibmad.MAD) bool
	switch {
	case class == ibmad.ClassSubnLID:
		answer = func(rm *ibmad.MAD) bool { node.answerLIDSMP(in, rm); return true }
	case class == ibmad.ClassSubnAdm && node == f.sm:
		answer = func(rm *ibmad.MAD) bool { return f.sa.answer(t, rm) }
	case class == ibmad.ClassPerfMgt:
		answer = func(rm *ibmad.MAD) bool { node.pma.answer(rm); return true }
	default:
		if node.muteAgents.Load() { // fault: its agents answer nothing (chaos.go)
			return
		}
		if f.deliverToAgent(fl, tid, slid, node, in, hops) {
			return
		}
		// No agent: the kernel answers a Get or Set itself with
		// "unsupported method/attribute" (docs/protocol.md, "Statuses").
		meth := m.Method()
		if meth != ibmad.MethodGet && meth != ibmad.MethodSet {
			return
		}
		answer = func(rm *ibmad.MAD) bool {
			rm.SetMethod(ibmad.MethodGetResp)
			rm.SetStatus(ibmad.StatusMethodAttrUnsupp)
			return true
		}
	}
	// The answer travels back to the requester's LID.
	back := in
	if node.IsSwitch() {
		back = node.Ports[0]
	}
	if class == ibmad.ClassSubnAdm && node == f.sm && f.sa.rmppTake(t, m, tid, p.Addr, back, slid, hops) {
		fl.delivered = true
		return // a GetTable transfer (sa_rmpp.go) took it
	}
	rnode, _, rhops, ok := f.lidRoute(back, slid, fl)
	if !ok || rnode != t.node {
		return
	}
	r := t.packet()
	*r = ibmad.Packet{MAD: *m}
	r.MAD.SetTID(tid)
	r.Addr = ibmad.Address{LID: p.Addr.LID, QPN: p.Addr.QPN, QKey: p.Addr.QKey, SL: p.Addr.SL}
	if !answer(&r.MAD) {
		t.pool.Put(r)
		return
	}
	fl.delivered = true
	f.deliver(t, r, hops+rhops)
}

// dataPlaneDrops is what the switches and receivers drop for QoS: the
// SLs no VL serves (SetSLUnusable), and the count of MADs dropped for
// their SL or DGID (QoSDrops).
type dataPlaneDrops struct {
	mu       sync.RWMutex
	unusable [16]bool // SLs whose packets the switches drop
	dropped  uint64   // MADs dropped for their SL or DGID
}

// admits says whether a LID-routed MAD with address a that crossed hops
// links reaches port in of node (where lidRoute delivered it): a GMP on
// an unusable SL that crossed a link was dropped on the way (its SL maps
// to no VL); a GRH whose DGID is not the receiving port's GID is dropped
// by the receiver, as an HCA drops a packet whose DGID is none of its
// GIDs; a router keeps a GRH for another subnet's prefix, which it
// routes (router.go).
func (f *Fabric) admits(a *ibmad.Address, hops int, node *Node, in *Port, smp bool) bool {
	f.drops.mu.RLock()
	slDrop := !smp && f.drops.unusable[a.SL&0xf] && hops > 0
	f.drops.mu.RUnlock()
	gidDrop := false
	if a.GRHPresent && !(node.Type == ibmad.NodeTypeRouter && a.GID.Prefix() != f.opts.GIDPrefix) {
		rcv := in
		if node.IsSwitch() {
			rcv = node.Ports[0]
		}
		gidDrop = a.GID != ibmad.MakeGID(f.opts.GIDPrefix, node.portGUID(rcv.Num))
	}
	if slDrop || gidDrop {
		f.drops.mu.Lock()
		f.drops.dropped++
		f.drops.mu.Unlock()
		return false
	}
	return true
}

// carryGRH gives the address a receiver sees the GRH of the MAD sent
// with address a from port from: the sender's GID as the remote GID, the
// hop limit, traffic class and flow label as sent (no router between).
func (f *Fabric) carryGRH(rcv *ibmad.Address, a *ibmad.Address, from *Port) {
	if !a.GRHPresent {
		return
	}
	rcv.GRHPresent, rcv.HopLimit, rcv.TClass, rcv.FlowLabel = true, a.HopLimit, a.TClass, a.FlowLabel
	rcv.GID = ibmad.MakeGID(f.opts.GIDPrefix, from.Node.portGUID(from.Num))
}

// SMP protection faults: fabrics where only the subnet manager may send
// SMPs. SA, vendor and performance MADs pass; a refused SMP is dropped
// without an answer, so its sender times out.
const (
	smpOpen        = 0
	smpFirewall    = 1 // every SMP from a non-SM node (an HCA's SMP firewall)
	smpMKeyProtect = 2 // every SMP from a non-SM node but to itself (M_Key protection elsewhere)
)

// smpRefused says whether the SMP protection drops request m sent from t.
func (f *Fabric) smpRefused(t *Transport, m *ibmad.MAD, isResp bool) bool {
	mode := f.smpMode.Load()
	if isResp || mode == smpOpen || t.node == f.sm {
		return false
	}
	switch m.MgmtClass() {
	case ibmad.ClassSubnDR:
		return mode == smpFirewall || m.DRHopCount() > 0
	case ibmad.ClassSubnLID:
		return true
	}
	return false
}

// leavesSubnet says whether a MAD with address a carries a GRH for
// another subnet's prefix (not this subnet's, not link-local), which a
// router passes on (router.go).
func (f *Fabric) leavesSubnet(a *ibmad.Address) bool {
	return a.GRHPresent && a.GID.Prefix() != f.opts.GIDPrefix && a.GID.Prefix()&0xFFC0_0000_0000_0000 != 0xFE80_0000_0000_0000
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
