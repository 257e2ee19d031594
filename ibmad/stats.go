package ibmad

import "sync/atomic"

// DropReason says why the engine discarded a received MAD.
type DropReason int

// Drop reasons; their String values are metric label values.
const (
	DropMalformed DropReason = iota
	DropUnknownTID
	DropNoHandler
	DropSendFailed
	DropLate
	// DropTruncated: the transport received a datagram too short (or too
	// long) to be a MAD and discarded it.
	DropTruncated
	// DropTransportAnswered: the transport answered a request itself, as
	// the kernel does (ibsim: GetResp 0x000C for a class nobody
	// registered), and did not pass it up.
	DropTransportAnswered
	// DropWrongResponder, DropWrongMethod, DropWrongAttribute: a response
	// whose TID is a waiting request's but that does not answer it: from
	// another node than the one asked (another LID, GID or directed
	// route), with another method than the request's response method,
	// or about another attribute, modifier or OUI (pending.go).
	DropWrongResponder
	DropWrongMethod
	DropWrongAttribute
	// DropReplyQueueFull: a handler's reply that the reply queue had no
	// room for, its requester's newest, the requester with the most
	// replies queued (recv.go).
	DropReplyQueueFull
	numDropReasons
)

// DropReasons lists every drop reason, for metrics.
func DropReasons() []DropReason {
	out := make([]DropReason, numDropReasons)
	for i := range out {
		out[i] = DropReason(i)
	}
	return out
}

func (r DropReason) valid() DropReason {
	if r < 0 || r >= numDropReasons {
		return DropMalformed
	}
	return r
}

// DropError is what a Transport's Recv returns for a packet that arrived
// and that the transport discarded or answered itself: the engine counts
// it by Reason and receives again, so that every packet received is
// delivered, handled or counted.
type DropError struct {
	Reason DropReason
	Err    error
	// Packet, when the transport read enough of it, is the dropped
	// message's address and first MAD: a response too long to take
	// (DropTruncated) fails the request it answers at once, with Err,
	// rather than leaving it to time out.
	Packet *Packet
}

func (d *DropError) Error() string {
	if d.Err == nil {
		return "ibmad: packet dropped: " + d.Reason.String()
	}
	return "ibmad: packet dropped: " + d.Reason.String() + ": " + d.Err.Error()
}

func (d *DropError) Unwrap() error { return d.Err }

func (r DropReason) String() string {
	switch r {
	case DropMalformed:
		return "malformed"
	case DropUnknownTID:
		return "unknown_tid"
	case DropNoHandler:
		return "no_handler"
	case DropSendFailed:
		return "send_failed"
	case DropLate:
		return "late"
	case DropTruncated:
		return "truncated"
	case DropTransportAnswered:
		return "transport_answered"
	case DropWrongResponder:
		return "wrong_responder"
	case DropWrongMethod:
		return "wrong_method"
	case DropWrongAttribute:
		return "wrong_attribute"
	case DropReplyQueueFull:
		return "reply_queue_full"
	}
	return "unknown"
}

type classCounters struct {
	requests, timeouts, retries, sendErrors atomic.Uint64
	acks                                    atomic.Uint64
}

type engineStats struct {
	classes     [256]classCounters
	drops       [numDropReasons]atomic.Uint64
	outstanding atomic.Int64
	recvErrors  atomic.Uint64
	responses   atomic.Uint64
	received    atomic.Uint64
	delivered   atomic.Uint64
	handled     atomic.Uint64
}

func (s *engineStats) class(c MgmtClass) *classCounters { return &s.classes[c] }

// delivery counts a packet handed to the pending table: delivered to
// its waiter, or dropped for why.
func (s *engineStats) delivery(why DropReason, delivered bool) {
	if delivered {
		s.delivered.Add(1)
		return
	}
	s.drops[why].Add(1)
}

// ClassStats are the request counters of one management class.
type ClassStats struct {
	Class      MgmtClass
	Requests   uint64 // attempts sent, retries included
	Timeouts   uint64 // attempts that timed out
	Retries    uint64
	SendErrors uint64
	// ACKs are the RMPP ACKs the engine sent while it received a table
	// (GetTable), prompts included; none where the kernel does RMPP
	// (docs/protocol.md, "SA tables (GetTable and RMPP)"). Requests does
	// not count them.
	ACKs uint64
}

// Stats is a snapshot of an engine's counters.
type Stats struct {
	Classes     []ClassStats // only classes with traffic
	Drops       map[DropReason]uint64
	Outstanding int64
	RecvErrors  uint64 // receive errors of the transport (each marks the device lost)
	Responses   uint64 // responses sent by handlers
	// Every packet received is exactly one of: delivered to a waiting
	// request (a response or a timeout report), handled (given to a
	// handler that answered or declined), or dropped (Drops, by reason).
	Received  uint64
	Delivered uint64
	Handled   uint64
}

// snapshot is Engine.Stats.
func (s *engineStats) snapshot() Stats {
	st := Stats{Drops: make(map[DropReason]uint64, numDropReasons)}
	for i := range s.classes {
		c := &s.classes[i]
		cs := ClassStats{Class: MgmtClass(i), Requests: c.requests.Load(), Timeouts: c.timeouts.Load(),
			Retries: c.retries.Load(), SendErrors: c.sendErrors.Load(), ACKs: c.acks.Load()}
		if cs.Requests != 0 || cs.SendErrors != 0 {
			st.Classes = append(st.Classes, cs)
		}
	}
	for r := DropReason(0); r < numDropReasons; r++ {
		st.Drops[r] = s.drops[r].Load()
	}
	st.Outstanding = s.outstanding.Load()
	st.RecvErrors = s.recvErrors.Load()
	st.Responses = s.responses.Load()
	st.Received = s.received.Load()
	st.Delivered = s.delivered.Load()
	st.Handled = s.handled.Load()
	return st
}
