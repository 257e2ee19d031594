package ibmad

import (
	"bytes"
	"encoding/binary"
	"fmt"
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

// rmppAck is an ACK the receiver owes the sender.
type rmppAck struct {
	send        bool
	seg, newWin uint32
}

// rmppReceiver reassembles one SA GetTable answer (IBA 13.6.5, receiver
// side). It is fed every response MAD of the transaction in arrival
// order and never blocks; the engine owns timing and retransmission
// prompts.
type rmppReceiver struct {
	window   uint32
	maxBytes int

	next    uint32 // next segment expected (1-based); 1 before the first
	winLast uint32 // last segment of the window the sender was granted
	total   uint32 // segments the first segment announced; 0 unknown
	done    bool
	table   Table
	lastAck rmppAck
}

func newRMPPReceiver(window uint32, maxBytes int) *rmppReceiver {
	if window == 0 {
		window = DefaultRMPPWindow
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxTableBytes
	}
	return &rmppReceiver{window: window, maxBytes: maxBytes, next: 1, winLast: 1}
}

func rmppErr(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrRMPP}, a...)...)
}

// feed processes one response MAD m. ext is the rest of a message a
// transport reassembled (the data parts of segments 2..n) and n the
// message's length when the transport knows it (0: unknown). It returns
// the ACK to send, if any; done reports a complete table; err a stream
// that cannot complete (with ErrTableTruncated the table holds the
// records of the first MAD).
func (r *rmppReceiver) feed(m *MAD, ext []byte, n int) (ack rmppAck, done bool, err error) {
	if r.done {
		return rmppAck{}, true, nil
	}
	var h RMPPHeader
	h.unmarshal(m[:])
	if r.next == 1 {
		if done, err := r.begin(m, &h); done || err != nil {
			return rmppAck{}, done, err
		}
	}
	whole, err := r.kind(&h)
	if err != nil {
		return rmppAck{}, false, err
	}
	if whole || r.next == 1 && (len(ext) > 0 || n > MADSize) {
		return rmppAck{}, true, r.whole(m, ext, n) // never segmented, or reassembled by the kernel
	}
	seg := h.Data1
	if ok, err := r.inOrder(seg); !ok {
		return rmppAck{}, false, err
	}
	if err := r.checkSegment(&h, seg); err != nil {
		return rmppAck{}, false, err
	}
	return r.add(m, &h, seg)
}

// begin starts the table from the first answer: it must be the SA's; an
// error status in one MAD ends the transfer (done, with a *StatusError).
func (r *rmppReceiver) begin(m *MAD, h *RMPPHeader) (done bool, err error) {
	if m.MgmtClass() != ClassSubnAdm {
		return false, rmppErr("answer of class %s", m.MgmtClass())
	}
	st := m.Status()
	r.table = Table{AttrID: m.AttrID(), Status: st, RecordSize: 8 * int(binary.BigEndian.Uint16(m[44:]))}
	if st != 0 && (h.Flags&RMPPFlagActive == 0 || h.Type != RMPPTypeData || h.Flags&RMPPFlagLast != 0) {
		r.done = true
		return true, &StatusError{Status: st}
	}
	return false, nil
}

// kind checks the Active flag and the RMPP type: a DATA segment goes on
// (nil), an unsegmented message (type 0) as the first answer is whole,
// and anything else ends the stream.
func (r *rmppReceiver) kind(h *RMPPHeader) (whole bool, err error) {
	if h.Flags&RMPPFlagActive == 0 {
		if r.next > 1 {
			return false, rmppErr("segment without the Active flag after segment %d", r.next-1)
		}
		return false, rmppErr("GetTable answer without RMPP (Active flag clear)")
	}
	switch h.Type {
	case RMPPTypeData:
		return false, nil
	case 0:
		if r.next == 1 {
			return true, nil
		}
		return false, rmppErr("RMPP type 0 after segment %d", r.next-1)
	case RMPPTypeStop, RMPPTypeAbort:
		return false, rmppErr("the SA ended the transfer with %s (RMPP status %d) after segment %d",
			map[uint8]string{RMPPTypeStop: "STOP", RMPPTypeAbort: "ABORT"}[h.Type], h.Status, r.next-1)
	default:
		return false, rmppErr("RMPP type %d from the sender", h.Type)
	}
}

// inOrder reports whether seg is the segment expected next. A duplicate
// (the sender missed an ACK; the engine re-ACKs on silence) and one out
// of order (the sender resends from the last ACK) are dropped without an
// error; segment 0 and one past the announced total are errors.
func (r *rmppReceiver) inOrder(seg uint32) (bool, error) {
	switch {
	case seg == 0:
		return false, rmppErr("segment number 0")
	case seg < r.next:
		return false, nil
	case seg > r.next:
		if r.total != 0 && seg > r.total {
			return false, rmppErr("segment %d of a message announced as %d segments", seg, r.total)
		}
		return false, nil
	}
	return true, nil
}

// checkSegment checks the expected segment seg's First and Last flags
// against its number and the total the first segment announced (which it
// records), and that its records fit the size limit.
func (r *rmppReceiver) checkSegment(h *RMPPHeader, seg uint32) error {
	first, last := h.Flags&RMPPFlagFirst != 0, h.Flags&RMPPFlagLast != 0
	if first != (seg == 1) {
		return rmppErr("segment %d with First flag %v", seg, first)
	}
	if seg == 1 && h.Data2 != 0 {
		total := (uint64(h.Data2) + RMPPSegPayload - 1) / RMPPSegPayload
		if total*SASegData > uint64(r.maxBytes)+SASegData {
			return rmppErr("announced %d segments, more than the %d-byte limit", total, r.maxBytes)
		}
		r.total = uint32(total)
	}
	if r.total != 0 {
		if err := r.checkTotal(seg, last); err != nil {
			return err
		}
	}
	if len(r.table.Data)+SASegData > r.maxBytes {
		return rmppErr("table larger than %d bytes", r.maxBytes)
	}
	return nil
}

// checkTotal checks segment seg against the announced total: not past
// it, and the Last flag on the last one only.
func (r *rmppReceiver) checkTotal(seg uint32, last bool) error {
	switch {
	case seg > r.total:
		return rmppErr("segment %d of a message announced as %d segments", seg, r.total)
	case seg == r.total && !last:
		return rmppErr("segment %d, the last announced, without the Last flag", seg)
	case last && seg != r.total:
		return rmppErr("Last flag on segment %d of %d", seg, r.total)
	}
	return nil
}

// add appends the checked segment seg's records; it returns the ACK owed
// at the end of the window granted, and done (with the records cut to
// the payload length) after the last segment.
func (r *rmppReceiver) add(m *MAD, h *RMPPHeader, seg uint32) (rmppAck, bool, error) {
	r.table.Data = append(r.table.Data, m[SADataOffset:]...)
	r.table.Segments++
	r.next++
	if h.Flags&RMPPFlagLast != 0 {
		pl := h.Data2 // of a single segment: the total, the same number
		if pl < saHdrPayload || pl > RMPPSegPayload {
			return rmppAck{}, false, rmppErr("last segment %d with PayloadLength %d (want %d..%d)", seg, pl, saHdrPayload, RMPPSegPayload)
		}
		r.table.Data = r.table.Data[:len(r.table.Data)-int(RMPPSegPayload-pl)]
		r.done = true
		r.lastAck = rmppAck{send: true, seg: seg, newWin: seg}
		return r.lastAck, true, r.finish()
	}
	if seg >= r.winLast {
		r.winLast = seg + r.window
		r.lastAck = rmppAck{send: true, seg: seg, newWin: r.winLast}
		return r.lastAck, false, nil
	}
	return rmppAck{}, false, nil
}

// prompt is the ACK to repeat when the sender has gone quiet: the last
// segment received in order and the window granted.
func (r *rmppReceiver) prompt() rmppAck {
	return rmppAck{send: true, seg: r.next - 1, newWin: r.winLast}
}

// started reports whether the first segment has arrived.
func (r *rmppReceiver) started() bool { return r.next > 1 }

// whole takes a message that arrived in one piece: reassembled by the
// transport (ext, n), or never segmented by the sender (RMPP type 0).
func (r *rmppReceiver) whole(m *MAD, ext []byte, n int) error {
	r.done = true
	r.table.Segments = 1
	data := append(append([]byte(nil), m[SADataOffset:]...), ext...)
	if n > SADataOffset && n-SADataOffset < len(data) {
		data = data[:n-SADataOffset]
	}
	r.table.Data = data
	if len(data) > r.maxBytes {
		return rmppErr("table larger than %d bytes", r.maxBytes)
	}
	var h RMPPHeader
	h.unmarshal(m[:])
	if h.Type == 0 && (n == 0 || n >= MADSize) {
		if err := r.finish(); err != nil {
			return err
		}
		return ErrTableTruncated
	}
	return r.finish()
}

// finish cuts the data to whole records.
func (r *rmppReceiver) finish() error {
	rs := r.table.RecordSize
	if rs == 0 {
		if len(bytes.TrimRight(r.table.Data, "\x00")) != 0 {
			return rmppErr("records with AttributeOffset 0")
		}
		r.table.Data = r.table.Data[:0]
		return nil
	}
	r.table.Data = r.table.Data[:len(r.table.Data)/rs*rs]
	return nil
}
