package ibsim

import (
	"encoding/binary"
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/simwire"
)

// ctl is struct sim_ctl. magic, clientid, type and len are in host byte
// order (little endian on every platform ibsim runs on here).
type ctl struct {
	clientID uint32
	typ      uint32
	length   uint32
	data     [simwire.CtlDataSize]byte
}

func (c *ctl) marshal() []byte {
	b := make([]byte, simwire.CtlSize)
	binary.LittleEndian.PutUint32(b[0:], simwire.Magic)
	binary.LittleEndian.PutUint32(b[4:], c.clientID)
	binary.LittleEndian.PutUint32(b[8:], c.typ)
	binary.LittleEndian.PutUint32(b[12:], c.length)
	copy(b[simwire.CtlDataOff:], c.data[:])
	return b
}

func (c *ctl) unmarshal(b []byte) error {
	if len(b) != simwire.CtlSize {
		return fmt.Errorf("ibsim: control reply of %d bytes, want %d", len(b), simwire.CtlSize)
	}
	if m := binary.LittleEndian.Uint32(b[0:]); m != simwire.Magic {
		return fmt.Errorf("ibsim: control reply with magic %#x", m)
	}
	c.clientID = binary.LittleEndian.Uint32(b[4:])
	c.typ = binary.LittleEndian.Uint32(b[8:])
	c.length = binary.LittleEndian.Uint32(b[12:])
	copy(c.data[:], b[simwire.CtlDataOff:])
	return nil
}

// request is struct sim_request. ibsim keeps LIDs and QPs as the
// network-order values of the umad header stored in u32 fields: a LID's
// two big-endian bytes come first, and QPs and the status are big-endian.
func marshalRequest(b []byte, p *ibmad.Packet, sqp uint32) {
	clear(b[:simwire.RequestMADOff])
	binary.BigEndian.PutUint16(b[0:], p.Addr.LID)
	if p.Addr.LID == ibmad.PermissiveLID {
		binary.BigEndian.PutUint16(b[4:], ibmad.PermissiveLID) // DR: slid 0xffff
	} // else slid 0: ibsim fills in the sender's LID
	binary.BigEndian.PutUint32(b[8:], p.Addr.QPN)
	binary.BigEndian.PutUint32(b[12:], sqp)
	binary.BigEndian.PutUint64(b[simwire.RequestLenOff:], ibmad.MADSize)
	copy(b[simwire.RequestMADOff:], p.MAD[:])
}

func unmarshalRequest(b []byte, p *ibmad.Packet) error {
	if len(b) != simwire.RequestSize {
		return fmt.Errorf("ibsim: data packet of %d bytes, want %d", len(b), simwire.RequestSize)
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
	if n := binary.BigEndian.Uint64(b[simwire.RequestLenOff:]); n > 0 && n <= ibmad.MADSize {
		p.Len = int(n)
	}
	copy(p.MAD[:], b[simwire.RequestMADOff:])
	return nil
}
