package ibsim

import (
	"encoding/binary"
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// Sizes of ibsim's wire structures (x86_64 layout, checked with offsetof).
const (
	requestSize    = 288 // struct sim_request: 5 x u32, 4 pad, u64 length, mad[256]
	requestMADOff  = 32
	requestLenOff  = 24
	ctlSize        = 80 // struct sim_ctl: magic, clientid, type, len, data[64]
	ctlDataSize    = 64
	clientInfoSize = 44 // struct sim_client_info: id, qp, issm, nodeid[32]
	simMagic       = 0xdeadbeef
	maxClients     = 10
	etimedout      = 110
)

// Control message types (enum SIM_CTL_TYPES).
const (
	ctlError = iota
	ctlConnect
	ctlDisconnect
	ctlGetPort
	ctlGetVendor
	ctlGetGID
	ctlGetGUID
	ctlGetNodeInfo
	ctlGetPortInfo
	ctlSetISSM
	ctlGetPKeys
)

// ctl is struct sim_ctl. magic, clientid, type and len are in host byte
// order (little endian on every platform ibsim runs on here).
type ctl struct {
	clientID uint32
	typ      uint32
	length   uint32
	data     [ctlDataSize]byte
}

func (c *ctl) marshal() []byte {
	b := make([]byte, ctlSize)
	binary.LittleEndian.PutUint32(b[0:], simMagic)
	binary.LittleEndian.PutUint32(b[4:], c.clientID)
	binary.LittleEndian.PutUint32(b[8:], c.typ)
	binary.LittleEndian.PutUint32(b[12:], c.length)
	copy(b[16:], c.data[:])
	return b
}

func (c *ctl) unmarshal(b []byte) error {
	if len(b) != ctlSize {
		return fmt.Errorf("ibsim: control reply of %d bytes, want %d", len(b), ctlSize)
	}
	if m := binary.LittleEndian.Uint32(b[0:]); m != simMagic {
		return fmt.Errorf("ibsim: control reply with magic %#x", m)
	}
	c.clientID = binary.LittleEndian.Uint32(b[4:])
	c.typ = binary.LittleEndian.Uint32(b[8:])
	c.length = binary.LittleEndian.Uint32(b[12:])
	copy(c.data[:], b[16:])
	return nil
}

// request is struct sim_request. ibsim keeps LIDs and QPs as the
// network-order values of the umad header stored in u32 fields: a LID's
// two big-endian bytes come first, and QPs and the status are big-endian.
func marshalRequest(b []byte, p *ibmad.Packet, sqp uint32) {
	clear(b[:requestMADOff])
	binary.BigEndian.PutUint16(b[0:], p.Addr.LID)
	if p.Addr.LID == ibmad.PermissiveLID {
		binary.BigEndian.PutUint16(b[4:], ibmad.PermissiveLID) // DR: slid 0xffff
	} // else slid 0: ibsim fills in the sender's LID
	binary.BigEndian.PutUint32(b[8:], p.Addr.QPN)
	binary.BigEndian.PutUint32(b[12:], sqp)
	binary.BigEndian.PutUint64(b[requestLenOff:], ibmad.MADSize)
	copy(b[requestMADOff:], p.MAD[:])
}

func unmarshalRequest(b []byte, p *ibmad.Packet) error {
	if len(b) != requestSize {
		return fmt.Errorf("ibsim: data packet of %d bytes, want %d", len(b), requestSize)
	}
	*p = ibmad.Packet{}
	p.Addr.LID = binary.BigEndian.Uint16(b[4:]) // slid
	p.Addr.QPN = binary.BigEndian.Uint32(b[12:])
	if p.Addr.QPN == ibmad.QP1 {
		p.Addr.QKey = ibmad.QP1QKey
	}
	p.TimedOut = binary.BigEndian.Uint32(b[16:]) != 0
	// The sender's length: libumad2sim cuts a longer (RMPP) message to
	// 256 bytes and says so here; a shorter one is a whole small message.
	if n := binary.BigEndian.Uint64(b[requestLenOff:]); n > 0 && n <= ibmad.MADSize {
		p.Len = int(n)
	}
	copy(p.MAD[:], b[requestMADOff:])
	return nil
}
