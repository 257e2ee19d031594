package sim

import (
	"sync"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// PathQoS is what the SA's PathRecord to a port says beyond its LIDs and
// GIDs: the SL and the GRH fields (hop limit, traffic class, flow label).
// The SA answers 0 for each by default, as OpenSM does within one subnet.
type PathQoS struct {
	SL        uint8 // 0..15
	HopLimit  uint8
	TClass    uint8
	FlowLabel uint32 // 20 bits
}

// qosState is the SL and GRH behaviour of the fabric: the PathRecords' QoS
// fields per destination port, and the SLs no VL serves.
type qosState struct {
	mu       sync.RWMutex
	path     map[ibmad.GUID]PathQoS // by destination port GUID
	unusable [16]bool               // SLs whose packets the switches drop
	dropped  uint64                 // MADs dropped for their SL or DGID
}

// SetPathQoS makes the SA's PathRecords to the port whose GUID is port
// carry q (the tracer takes the SL and, when the hop limit is over 1, a
// GRH from them: docs/protocol.md, "SL and GRH").
func (f *Fabric) SetPathQoS(port ibmad.GUID, q PathQoS) {
	f.qos.mu.Lock()
	defer f.qos.mu.Unlock()
	if f.qos.path == nil {
		f.qos.path = map[ibmad.GUID]PathQoS{}
	}
	q.SL &= 0xf
	q.FlowLabel &= 0xfffff
	f.qos.path[port] = q
}

// SetSLUnusable makes the switches drop every LID-routed GMP sent on sl
// (as a switch whose SL-to-VL table maps sl to VL15 discards it), or
// carry it again. SMPs travel on VL15 whatever their SL and are never
// dropped for it.
func (f *Fabric) SetSLUnusable(sl uint8, unusable bool) {
	f.qos.mu.Lock()
	f.qos.unusable[sl&0xf] = unusable
	f.qos.mu.Unlock()
}

// QoSDrops counts the MADs dropped for an unusable SL or for a GRH whose
// DGID is not the receiving port's GID.
func (f *Fabric) QoSDrops() uint64 {
	f.qos.mu.RLock()
	defer f.qos.mu.RUnlock()
	return f.qos.dropped
}

// pathQoS fills the QoS fields of a PathRecord to port dst.
func (f *Fabric) pathQoS(pr *ibmad.PathRecord, dst *Port) {
	f.qos.mu.RLock()
	q, ok := f.qos.path[dst.Node.portGUID(dst.Num)]
	f.qos.mu.RUnlock()
	if ok {
		pr.SL, pr.HopLimit, pr.TClass, pr.FlowLabel = q.SL, q.HopLimit, q.TClass, q.FlowLabel
	}
}

// admits says whether a LID-routed MAD with address a that crossed hops
// links reaches port in of node (where lidRoute delivered it): a GMP on
// an unusable SL that crossed a link was dropped on the way (its SL maps
// to no VL); a GRH whose DGID is not the receiving port's GID is dropped
// by the receiver, as an HCA drops a packet whose DGID is none of its
// GIDs; a router keeps a GRH for another subnet's prefix, which it
// routes (router_forward.go).
func (f *Fabric) admits(a *ibmad.Address, hops int, node *Node, in *Port, smp bool) bool {
	f.qos.mu.RLock()
	slDrop := !smp && f.qos.unusable[a.SL&0xf] && hops > 0
	f.qos.mu.RUnlock()
	gidDrop := false
	if a.GRHPresent && !(node.Type == ibmad.NodeTypeRouter && a.GID.Prefix() != f.opts.GIDPrefix) {
		rcv := in
		if node.IsSwitch() {
			rcv = node.Ports[0]
		}
		gidDrop = a.GID != ibmad.MakeGID(f.opts.GIDPrefix, node.portGUID(rcv.Num))
	}
	if slDrop || gidDrop {
		f.qos.mu.Lock()
		f.qos.dropped++
		f.qos.mu.Unlock()
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
