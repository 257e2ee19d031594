package simserve

import (
	"encoding/binary"
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/simwire"
)

var le = binary.LittleEndian

// ctlMsg is a received struct sim_ctl; the reply is the same buffer with
// type and data rewritten, as ibsim answers.
type ctlMsg []byte

func parseCtl(b []byte) (ctlMsg, error) {
	if len(b) != simwire.CtlSize {
		return nil, fmt.Errorf("control message of %d bytes, want %d", len(b), simwire.CtlSize)
	}
	if m := le.Uint32(b); m != simwire.Magic {
		return nil, fmt.Errorf("control message with magic %#x, want %#x", m, uint32(simwire.Magic))
	}
	return ctlMsg(b), nil
}

func (c ctlMsg) clientID() uint32 { return le.Uint32(c[4:]) }
func (c ctlMsg) typ() uint32      { return le.Uint32(c[8:]) }
func (c ctlMsg) data() []byte     { return c[simwire.CtlDataOff : simwire.CtlDataOff+simwire.CtlDataSize] }
func (c ctlMsg) fail()            { le.PutUint32(c[8:], simwire.CtlError) }

// reply clears the data and returns it for the answer to fill.
func (c ctlMsg) reply() []byte {
	d := c.data()
	clear(d)
	return d
}

// cString returns b up to its first NUL.
func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// request is one struct sim_request. LIDs are the two network-order
// bytes of the umad header at the start of their u32 field; QPs, the
// status and the length are network order.
type request struct {
	dlid, slid uint16
	dqp, sqp   uint32
	status     uint32
	length     uint64
}

func parseRequest(b []byte, mad *ibmad.MAD) (request, error) {
	if len(b) != simwire.RequestSize {
		return request{}, fmt.Errorf("data packet of %d bytes, want %d", len(b), simwire.RequestSize)
	}
	be := binary.BigEndian
	r := request{dlid: be.Uint16(b[0:]), slid: be.Uint16(b[4:]), dqp: be.Uint32(b[8:]), sqp: be.Uint32(b[12:]),
		status: be.Uint32(b[16:]), length: be.Uint64(b[simwire.RequestLenOff:])}
	copy(mad[:], b[simwire.RequestMADOff:])
	return r, nil
}

func (r *request) marshal(b []byte, mad *ibmad.MAD) {
	clear(b[:simwire.RequestMADOff])
	be := binary.BigEndian
	be.PutUint16(b[0:], r.dlid)
	be.PutUint16(b[4:], r.slid)
	be.PutUint32(b[8:], r.dqp)
	be.PutUint32(b[12:], r.sqp)
	be.PutUint32(b[16:], r.status)
	be.PutUint64(b[simwire.RequestLenOff:], r.length)
	copy(b[simwire.RequestMADOff:], mad[:])
}

// abstractName is an abstract socket name as ibsim and libumad2sim bind
// it: the address length counts the terminating NUL, so it is part of
// the name.
func abstractName(format string, a ...any) string {
	return "@" + fmt.Sprintf(format, a...) + "\x00"
}
