package ibmad

import (
	"bytes"
	"math/rand/v2"
)

// Matching an answer to its request (docs/protocol.md, "Which answer is
// ours"). A TID alone proves nothing: any node the engine asks sees it,
// and the kernel checks the responder only for LID-routed answers. So an
// answer completes a request only when it is the answer to exactly what
// was asked: from the request's destination, of its class, with the
// response method of its method, its attribute and modifier and, in
// vendor range 2, its OUI. Anything else is dropped and counted by why.

// expected is what an answer to one request must carry, taken from the
// request as it was sent (its TID aside: each attempt has its own).
type expected struct {
	class  MgmtClass
	method Method // the response method
	attr   AttrID
	mod    uint32
	oui    OUI // vendor range 2 only
	// The responder. A directed-route SMP comes back along its own
	// path: the hop count and the initial path must be the request's. A
	// LID-routed MAD must come from the LID it was sent to, a MAD sent
	// with a GRH from the GID it was sent to when the answer has a GRH.
	dr   bool
	hops uint8
	path [MaxDRHops + 1]byte
	lid  uint16
	grh  bool
	gid  GID
}

// expect is what answers pkt's request.
func expect(m *MAD, a *Address) expected {
	x := expected{class: m.MgmtClass(), attr: m.AttrID(), mod: m.AttrMod()}
	switch meth := m.Method(); meth {
	case MethodTrap:
		x.method = MethodTrapRepress
	default:
		x.method = meth.Response()
	}
	if x.class.IsVendorRange2() {
		x.oui = m.OUI()
	}
	switch {
	case m.IsDirectedRoute():
		x.dr = true
		x.hops = m.DRHopCount()
		if x.hops > MaxDRHops {
			x.hops = MaxDRHops
		}
		copy(x.path[:], m[drInitialPath:drInitialPath+int(x.hops)+1])
	default:
		x.lid = a.LID
		x.grh, x.gid = a.GRHPresent, a.GID
	}
	return x
}

// drInitialPath is the offset of a directed-route SMP's InitialPath.
const drInitialPath = 128

// match says whether pkt answers the request x was taken from, and if
// not, why it is dropped; lmc is the local port's LMC (sameLIDBlock).
func (x *expected) match(pkt *Packet, lmc uint8) (DropReason, bool) {
	m := &pkt.MAD
	if m.MgmtClass() != x.class {
		return DropUnknownTID, false
	}
	switch {
	case x.dr:
		if !m.DRDirection() || m.DRHopCount() != x.hops ||
			!bytes.Equal(m[drInitialPath:drInitialPath+int(x.hops)+1], x.path[:int(x.hops)+1]) {
			return DropWrongResponder, false
		}
	case x.grh && pkt.Addr.GRHPresent:
		if pkt.Addr.GID != x.gid {
			return DropWrongResponder, false
		}
	case x.grh:
		// No GRH came back (ibsim carries none): the answer must then
		// come from the LID the request was sent to, the router's
		// for another subnet.
		if !sameLIDBlock(pkt.Addr.LID, x.lid, lmc) {
			return DropWrongResponder, false
		}
	case x.lid != PermissiveLID && !sameLIDBlock(pkt.Addr.LID, x.lid, lmc):
		return DropWrongResponder, false
	}
	if m.Method() != x.method {
		return DropWrongMethod, false
	}
	if m.AttrID() != x.attr || m.AttrMod() != x.mod {
		return DropWrongAttribute, false
	}
	if x.class.IsVendorRange2() && m.OUI() != x.oui {
		return DropWrongAttribute, false
	}
	return 0, true
}

// sameLIDBlock says whether slid, the source LID of an answer to a
// request sent to dlid, is dlid's port: dlid itself, or another LID of
// the 2^lmc that the port's LMC gives it. A responder may answer from its
// base LID (ibsim does, and so does the simulator) whichever of its LIDs
// was asked. lmc is the local port's, as the kernel takes it for the same
// check; a subnet gives every CA port one LMC (OpenSM's lmc).
func sameLIDBlock(slid, dlid uint16, lmc uint8) bool {
	return slid>>(lmc&7) == dlid>>(lmc&7)
}

// nextTID draws the low 32 bits of a TID at random (the kernel owns the
// high 32: docs/protocol.md). A counter let any node the engine asked
// guess the next ones and answer them first; a draw from the runtime's
// ChaCha8 generator cannot be guessed from the ones seen. The kernel
// refuses a second outstanding request with the TID and class of one
// still outstanding: a TID mapped here (every attempt of a request
// still waiting) is drawn again, and 0 is never used. Called with e.mu
// held.
func (e *Engine) nextTID() uint32 {
	for {
		t := rand.Uint32()
		if t == 0 {
			continue
		}
		if _, busy := e.pending[t]; !busy {
			return t
		}
	}
}
