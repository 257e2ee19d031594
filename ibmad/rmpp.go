package ibmad

import "encoding/binary"

// RMPPHeader is the RMPP header at MAD bytes 24-35 of SA and vendor
// range-2 MADs (IBA 13.6.2.1). It is all zero when RMPP is not used.
type RMPPHeader struct {
	Version  uint8
	Type     uint8 // 1 DATA, 2 ACK, 3 STOP, 4 ABORT
	RespTime uint8 // 5 bits
	Flags    uint8 // 3 bits: bit0 Active, bit1 First, bit2 Last
	Status   uint8
	Data1    uint32 // SegmentNumber
	Data2    uint32 // PayloadLength or NewWindowLast
}

// RMPP flags.
const (
	RMPPFlagActive = 1 << 0
	RMPPFlagFirst  = 1 << 1
	RMPPFlagLast   = 1 << 2
)

const rmppOffset = 24

func (r *RMPPHeader) marshalTo(b []byte) {
	b[24] = r.Version
	b[25] = r.Type
	b[26] = r.RespTime<<3 | r.Flags&0x7
	b[27] = r.Status
	binary.BigEndian.PutUint32(b[28:], r.Data1)
	binary.BigEndian.PutUint32(b[32:], r.Data2)
}

func (r *RMPPHeader) unmarshal(b []byte) {
	r.Version = b[24]
	r.Type = b[25]
	r.RespTime = b[26] >> 3
	r.Flags = b[26] & 0x7
	r.Status = b[27]
	r.Data1 = binary.BigEndian.Uint32(b[28:])
	r.Data2 = binary.BigEndian.Uint32(b[32:])
}
