package umad

import (
	"encoding/binary"
	"math/bits"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// Kernel ABI of rdma/ib_user_mad.h (docs/protocol.md, "The umad kernel
// interface"). The layouts and the ioctl numbers (ioctl_linux.go) are
// checked against the C header by a cgo-only test (abi_cgo_test.go).
const (
	hdrSize     = 64 // struct ib_user_mad_hdr
	hdrSizeOld  = 56 // struct ib_user_mad_hdr_old: no pkey_index
	regReqSize  = 28 // struct ib_user_mad_reg_req
	regReq2Size = 40 // struct ib_user_mad_reg_req2
	maxAgents   = 32 // IB_UMAD_MAX_AGENTS

	// timeoutReportSize is the MAD part of a send-timeout report: the
	// kernel returns the user header and the 24-byte common MAD header.
	timeoutReportSize = 24
)

// header is struct ib_user_mad_hdr. Multi-byte fields are host order
// except qpn, qkey, lid and flow_label, which are big endian; pkey_index
// is host order and exists only in the 64-byte layout.
type header struct {
	id        uint32
	status    uint32
	timeoutMS uint32
	retries   uint32
	length    uint32
	addr      ibmad.Address
}

func (h *header) marshal(b []byte, size int) {
	ne := binary.NativeEndian
	clear(b[:size])
	ne.PutUint32(b[0:], h.id)
	ne.PutUint32(b[4:], h.status)
	ne.PutUint32(b[8:], h.timeoutMS)
	ne.PutUint32(b[12:], h.retries)
	ne.PutUint32(b[16:], h.length)
	a := &h.addr
	binary.BigEndian.PutUint32(b[20:], a.QPN)
	binary.BigEndian.PutUint32(b[24:], a.QKey)
	binary.BigEndian.PutUint16(b[28:], a.LID)
	b[30] = a.SL
	b[31] = a.PathBits
	if a.GRHPresent {
		b[32] = 1
		b[33] = a.GIDIndex
		b[34] = a.HopLimit
		b[35] = a.TClass
		copy(b[36:52], a.GID[:])
		binary.BigEndian.PutUint32(b[52:], a.FlowLabel)
	}
	if size == hdrSize {
		ne.PutUint16(b[56:], a.PKeyIndex)
	}
}

func (h *header) unmarshal(b []byte, size int) {
	ne := binary.NativeEndian
	h.id = ne.Uint32(b[0:])
	h.status = ne.Uint32(b[4:])
	h.timeoutMS = ne.Uint32(b[8:])
	h.retries = ne.Uint32(b[12:])
	h.length = ne.Uint32(b[16:])
	a := &h.addr
	*a = ibmad.Address{}
	a.QPN = binary.BigEndian.Uint32(b[20:])
	a.QKey = binary.BigEndian.Uint32(b[24:])
	a.LID = binary.BigEndian.Uint16(b[28:])
	a.SL = b[30]
	a.PathBits = b[31]
	if b[32] != 0 {
		a.GRHPresent = true
		a.GIDIndex = b[33]
		a.HopLimit = b[34]
		a.TClass = b[35]
		copy(a.GID[:], b[36:52])
		a.FlowLabel = binary.BigEndian.Uint32(b[52:])
	}
	if size == hdrSize {
		a.PKeyIndex = ne.Uint16(b[56:])
	}
}

// methodMask is the 128-bit mask of methods whose unsolicited requests an
// agent receives: bit m is bit m%64 of word m/64 (docs/protocol.md).
func methodMask(methods []ibmad.Method) [2]uint64 {
	var m [2]uint64
	for _, x := range methods {
		v := uint(x) & 0x7f
		m[v/64] |= 1 << (v % 64)
	}
	return m
}

// regReq is struct ib_user_mad_reg_req (28 bytes).
func regReq(qpn uint8, class ibmad.MgmtClass, version uint8, mask [2]uint64, oui ibmad.OUI, rmpp uint8) [regReqSize]byte {
	var b [regReqSize]byte
	ne := binary.NativeEndian
	// method_mask: 128 bits as an array of unsigned longs in host order,
	// bit m in bit m%N of long m/N (N = bits per long): two u64 on 64-bit
	// kernels, four u32 on 32-bit ones (the same bytes on little endian,
	// not on big endian).
	if bits.UintSize == 64 {
		ne.PutUint64(b[4:], mask[0])
		ne.PutUint64(b[12:], mask[1])
	} else {
		for i := range 4 {
			ne.PutUint32(b[4+4*i:], uint32(mask[i/2]>>(32*(i%2))))
		}
	}
	b[20] = qpn
	b[21] = uint8(class)
	b[22] = version
	b[23], b[24], b[25] = byte(oui>>16), byte(oui>>8), byte(oui)
	b[26] = rmpp
	return b
}

// regReq2 is struct ib_user_mad_reg_req2 (40 bytes).
func regReq2(qpn uint8, class ibmad.MgmtClass, version uint8, mask [2]uint64, oui ibmad.OUI, rmpp uint8) [regReq2Size]byte {
	var b [regReq2Size]byte
	ne := binary.NativeEndian
	ne.PutUint32(b[4:], uint32(qpn))
	b[8] = uint8(class)
	b[9] = version
	ne.PutUint64(b[16:], mask[0])
	ne.PutUint64(b[24:], mask[1])
	ne.PutUint32(b[32:], uint32(oui))
	b[36] = rmpp
	return b
}

// qpnFor returns the QP a class's agent registers on: 0 for SMPs, 1 else.
func qpnFor(c ibmad.MgmtClass) uint8 {
	if c.IsSMP() {
		return 0
	}
	return 1
}

// rmppFor returns the RMPP version libibmad registers a class with: 1 for
// SA (its GetTable answers are multi-segment), 0 otherwise.
func rmppFor(c ibmad.MgmtClass) uint8 {
	if c == ibmad.ClassSubnAdm {
		return 1
	}
	return 0
}
