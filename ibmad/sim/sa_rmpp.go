package sim

import (
	"encoding/binary"
	"sync"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// The SA's GetTable answers go out as RMPP DATA segments the way the
// Linux kernel's MAD layer sends OpenSM's (docs/protocol.md, "RMPP"):
// segment 1 alone, then as far as each ACK's NewWindowLast; PayloadLength
// is the whole payload in segment 1 and the last segment's own payload in
// the last one, 220 bytes a segment counting the 20-byte SA header. An
// ACK that moves nothing forward is a receiver's prompt: the window is
// sent again from the segment after the ACKed one.

// rmppSessionTTL bounds how long an unfinished transfer is kept.
const rmppSessionTTL = time.Minute

// maxRMPPSessions bounds the transfers kept at once.
const maxRMPPSessions = 4096

type rmppSessions struct {
	mu sync.Mutex
	m  map[uint64]*rmppSession // by the request's full TID
}

type rmppSession struct {
	t       *Transport
	hdr     ibmad.MAD // the first segment's header bytes (0-55)
	data    []byte
	n       uint32 // segments
	acked   uint32
	sent    uint32
	winLast uint32
	created time.Time
	hops    int           // of the request's way in
	back    *Port         // where the answers leave the SM node
	slid    uint16        // the requester's LID
	addr    ibmad.Address // the reply's
}

// rmppTake handles the RMPP side of an SA request m from t (tid its full
// TID, addr where the answers say they come from): a GetTable of a table
// attribute starts a transfer, an ACK moves one on, a STOP or ABORT ends
// one. It reports whether it took m; otherwise sa.answer answers it. Every
// segment is routed back from back to slid on its own, so link faults hit
// segments one by one. The caller holds the fabric's mu for reading.
func (sa *subnetAdmin) rmppTake(t *Transport, m *ibmad.MAD, tid uint64, addr ibmad.Address, back *Port, slid uint16, hops int) bool {
	if m.Method() != ibmad.MethodGetTable || sa.refuses().NoTables {
		return false // sa.answer answers a GetTable "method unsupported"
	}
	typ, active := m[25], m[26]&ibmad.RMPPFlagActive != 0
	s := &sa.rmpp
	switch {
	case active && typ == ibmad.RMPPTypeAck:
		sa.rmppAck(t, m, tid)
		return true
	case active && (typ == ibmad.RMPPTypeStop || typ == ibmad.RMPPTypeAbort):
		s.mu.Lock()
		if ss := s.m[tid]; ss != nil && ss.t == t {
			delete(s.m, tid)
		}
		s.mu.Unlock()
		return true
	case active:
		return true // DATA towards the SA: no request of ours is segmented
	}
	mask := binary.BigEndian.Uint64(m[48:])
	recs, size, ok := sa.table(m.AttrID(), m.SAData(), mask)
	if !ok {
		return false
	}
	data := make([]byte, 0, len(recs)*size)
	for _, rec := range recs {
		data = append(data, rec...)
	}
	n := uint32((len(data) + ibmad.SASegData - 1) / ibmad.SASegData)
	if n == 0 {
		n = 1
	}
	ss := &rmppSession{t: t, hdr: *m, data: data, n: n, winLast: 1, sent: 1, created: time.Now(), hops: hops, back: back, slid: slid, addr: addr}
	ss.hdr.SetTID(tid)
	ss.hdr.SetMethod(ibmad.MethodGetTableResp)
	ss.hdr.SetStatus(ibmad.StatusOK)
	clear(ss.hdr[36:44]) // SM_Key: OpenSM answers 0
	binary.BigEndian.PutUint16(ss.hdr[44:], uint16(size/8))
	if n > 1 {
		s.mu.Lock()
		if s.m == nil {
			s.m = map[uint64]*rmppSession{}
		}
		for k, o := range s.m {
			if time.Since(o.created) > rmppSessionTTL || len(s.m) >= maxRMPPSessions {
				delete(s.m, k)
			}
		}
		s.m[tid] = ss
		s.mu.Unlock()
	}
	sa.sendSegment(ss, 1)
	return true
}

// rmppAck moves the transfer of tid on as the ACK m from t says: the
// segments up to its NewWindowLast go out, or the window again after a
// prompt; the last ACK ends the transfer.
func (sa *subnetAdmin) rmppAck(t *Transport, m *ibmad.MAD, tid uint64) {
	s := &sa.rmpp
	s.mu.Lock()
	ss := s.m[tid]
	if ss == nil || ss.t != t {
		s.mu.Unlock()
		return // an ACK of a finished or unknown transfer
	}
	seg, win := binary.BigEndian.Uint32(m[28:]), binary.BigEndian.Uint32(m[32:])
	from := ss.sent + 1
	if seg > ss.acked {
		ss.acked = seg
	} else if win <= ss.winLast {
		from = ss.acked + 1 // a prompt: send the window again
	}
	if win > ss.winLast {
		ss.winLast = win
	}
	if ss.acked >= ss.n {
		delete(s.m, tid)
	}
	to := min(ss.winLast, ss.n)
	s.mu.Unlock()
	for i := from; i <= to; i++ {
		sa.sendSegment(ss, i)
	}
	s.mu.Lock()
	ss.sent = max(ss.sent, to)
	s.mu.Unlock()
}

// sendSegment delivers DATA segment i (1-based) of ss to its requester.
func (sa *subnetAdmin) sendSegment(ss *rmppSession, i uint32) {
	f := sa.f
	rnode, _, rhops, ok := f.lidRoute(ss.back, ss.slid, nil)
	if !ok || rnode != ss.t.node {
		return // lost on the way back
	}
	p := ss.t.packet()
	*p = ibmad.Packet{MAD: ss.hdr}
	m := &p.MAD
	pad := ss.n*ibmad.SASegData - uint32(len(ss.data))
	h := ibmad.RMPPHeader{Version: 1, Type: ibmad.RMPPTypeData, RespTime: 0x1F, Flags: ibmad.RMPPFlagActive, Data1: i}
	if i == 1 {
		h.Flags |= ibmad.RMPPFlagFirst
		h.Data2 = ss.n*ibmad.RMPPSegPayload - pad
	}
	if i == ss.n {
		h.Flags |= ibmad.RMPPFlagLast
		h.Data2 = ibmad.RMPPSegPayload - pad
	}
	m[24], m[25], m[26], m[27] = h.Version, h.Type, h.RespTime<<3|h.Flags, h.Status
	binary.BigEndian.PutUint32(m[28:], h.Data1)
	binary.BigEndian.PutUint32(m[32:], h.Data2)
	off := int(i-1) * ibmad.SASegData
	clear(m[ibmad.SADataOffset:])
	copy(m[ibmad.SADataOffset:], ss.data[off:min(off+ibmad.SASegData, len(ss.data))])
	p.Addr = ss.addr
	f.deliver(ss.t, p, ss.hops+rhops)
}
