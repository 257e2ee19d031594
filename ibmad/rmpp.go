package ibmad

import (
	"encoding/binary"
	"errors"
)

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

// rmppOffset is where the RMPP header starts in a MAD (docs/protocol.md).
const rmppOffset = 24

func (r *RMPPHeader) marshalTo(b []byte) {
	b[rmppOffset] = r.Version
	b[rmppOffset+1] = r.Type
	b[rmppOffset+2] = r.RespTime<<3 | r.Flags&0x7
	b[rmppOffset+3] = r.Status
	binary.BigEndian.PutUint32(b[rmppOffset+4:], r.Data1)
	binary.BigEndian.PutUint32(b[rmppOffset+8:], r.Data2)
}

func (r *RMPPHeader) unmarshal(b []byte) {
	r.Version = b[rmppOffset]
	r.Type = b[rmppOffset+1]
	r.RespTime = b[rmppOffset+2] >> 3
	r.Flags = b[rmppOffset+2] & 0x7
	r.Status = b[rmppOffset+3]
	r.Data1 = binary.BigEndian.Uint32(b[rmppOffset+4:])
	r.Data2 = binary.BigEndian.Uint32(b[rmppOffset+8:])
}

// RMPP types (IBA 13.6.2.1).
const (
	RMPPTypeData  = 1
	RMPPTypeAck   = 2
	RMPPTypeStop  = 3
	RMPPTypeAbort = 4
)

// RMPP sizes for the SA class (docs/protocol.md, "RMPP"): every segment
// carries the 20-byte SA header and 200 bytes of records; the RMPP
// payload the PayloadLength field counts is both, 220 bytes a segment.
const (
	RMPPSegPayload = MADSize - 36           // 220
	SASegData      = MADSize - SADataOffset // 200
	saHdrPayload   = RMPPSegPayload - SASegData
	// DefaultRMPPWindow is the receive window a GetTable grants the SA, in
	// segments (the Linux kernel's receiver grants a similar one).
	DefaultRMPPWindow = 64
	// DefaultMaxTableBytes bounds one reassembled table.
	DefaultMaxTableBytes = 64 << 20
)

// GetTable errors.
var (
	// ErrRMPP means an RMPP stream was malformed or stopped: bad segment
	// numbers, a missing First or Last flag, an ABORT or STOP from the
	// sender, or no further segment within the timeout.
	ErrRMPP = errors.New("ibmad: RMPP")
	// ErrTableTruncated means the SA's answer holds only the records of
	// its first MAD: the sender's MAD layer did not segment the message
	// (ibsim's libumad2sim cuts every MAD to 256 bytes; docs/protocol.md).
	// GetTable returns the whole records it got alongside this error.
	ErrTableTruncated = errors.New("ibmad: SA table truncated to its first MAD")
)

// Table is a reassembled SA GetTable answer.
type Table struct {
	AttrID     AttrID
	Status     Status
	RecordSize int    // AttributeOffset * 8
	Data       []byte // Len() records of RecordSize bytes
	Segments   int    // MADs the answer came in (1 when reassembled by the kernel)
}

// Len returns the number of records.
func (t *Table) Len() int {
	if t == nil || t.RecordSize == 0 {
		return 0
	}
	return len(t.Data) / t.RecordSize
}

// Record returns record i (0 <= i < Len()).
func (t *Table) Record(i int) []byte { return t.Data[i*t.RecordSize : (i+1)*t.RecordSize] }
