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
	numDropReasons
)

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
	}
	return "unknown"
}

type classCounters struct {
	requests, timeouts, retries, sendErrors atomic.Uint64
}

type engineStats struct {
	classes     [256]classCounters
	drops       [numDropReasons]atomic.Uint64
	outstanding atomic.Int64
	recvErrors  atomic.Uint64
	responses   atomic.Uint64
}

func (s *engineStats) class(c MgmtClass) *classCounters { return &s.classes[c] }

// ClassStats are the request counters of one management class.
type ClassStats struct {
	Class      MgmtClass
	Requests   uint64 // attempts sent, retries included
	Timeouts   uint64 // attempts that timed out
	Retries    uint64
	SendErrors uint64
}

// Stats is a snapshot of an engine's counters.
type Stats struct {
	Classes     []ClassStats // only classes with traffic
	Drops       map[DropReason]uint64
	Outstanding int64
	RecvErrors  uint64
	Responses   uint64 // responses sent by handlers
}

// Stats returns a snapshot of the counters.
func (e *Engine) Stats() Stats {
	st := Stats{Drops: make(map[DropReason]uint64, numDropReasons)}
	for i := range e.stats.classes {
		c := &e.stats.classes[i]
		cs := ClassStats{Class: MgmtClass(i), Requests: c.requests.Load(), Timeouts: c.timeouts.Load(),
			Retries: c.retries.Load(), SendErrors: c.sendErrors.Load()}
		if cs.Requests != 0 || cs.SendErrors != 0 {
			st.Classes = append(st.Classes, cs)
		}
	}
	for r := DropReason(0); r < numDropReasons; r++ {
		st.Drops[r] = e.stats.drops[r].Load()
	}
	st.Outstanding = e.stats.outstanding.Load()
	st.RecvErrors = e.stats.recvErrors.Load()
	st.Responses = e.stats.responses.Load()
	return st
}
