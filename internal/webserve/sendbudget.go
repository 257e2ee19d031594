package webserve

import (
	"net/http"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
)

// DefaultSendBudget is the memory that rendered /metrics answers may
// hold while they are sent: at 10,000 destinations an uncompressed
// answer is about 8 MB (gzip'd, about 0.6 MB), so some 30 clients that
// do not read fit before the oldest is cut off.
const DefaultSendBudget = 256 << 20

// NewSendBudget returns the bound of budget bytes on the answers being
// sent (the collector's renderFirst), whose cuts its Collector counts in
// ibtracer_http_answers_cut_total.
func NewSendBudget(budget int64, logger log.Logger) *SendBudget {
	return &SendBudget{budget: budget, logger: logger, cut: prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "ibtracer", Subsystem: "http", Name: "answers_cut_total",
		Help: "/metrics answers cut off while being sent, oldest first, to keep the memory of the answers waiting on slow clients within its budget.",
	})}
}

// Collector is the counter of the answers cut off.
func (s *SendBudget) Collector() prometheus.Collector { return s.cut }

// SendBudget bounds the memory of rendered answers waiting on their
// clients: past the budget, the answer that has been sending longest is
// cut off (its connection's write deadline set to now, so its write
// fails and its memory is freed) to make room for the new one, which is
// always sent (docs/architecture.md, "HTTP server limits").
type SendBudget struct {
	budget int64
	logger log.Logger
	cut    prometheus.Counter
	mu     sync.Mutex // guards bytes, list and total
	bytes  int64      // the sizes of list, summed
	list   []*sending // oldest first
	total  uint64     // answers cut so far
	// picked, when not nil, runs in begin once the lock is released
	// (tests: another answer's end runs there).
	picked func()
}

type sending struct {
	size int64
	w    http.ResponseWriter
}

// Begin registers an answer of size bytes about to be sent to w and
// returns the function that ends it.
//
// The victims' write deadlines are set while s.mu is held: a sending's
// end takes s.mu too and runs in its handler (a handler defers it), so
// a victim's handler has not returned when its deadline is set. Set
// after the unlock, the deadline could reach a handler that had just
// finished: net/http forbids using its ResponseWriter then, and the
// deadline, on the connection, would fail that connection's next
// keep-alive answer, counted as cut though it never was
// (docs/architecture.md, "HTTP server limits").
func (s *SendBudget) Begin(w http.ResponseWriter, size int64) (end func()) {
	me := &sending{size: size, w: w}
	s.mu.Lock()
	s.list = append(s.list, me)
	s.bytes += size
	cut := 0
	for s.bytes > s.budget && len(s.list) > 1 {
		v := s.list[0]
		s.bytes -= v.size
		s.list = s.list[1:]
		_ = http.NewResponseController(v.w).SetWriteDeadline(time.Now())
		cut++
	}
	s.total += uint64(cut)
	total := s.total
	s.mu.Unlock()
	if s.picked != nil {
		s.picked()
	}
	if cut > 0 {
		s.cut.Add(float64(cut))
		level.Warn(s.logger).Log("msg", "cut off /metrics answers waiting on clients that do not read, to stay within the memory budget",
			"cut", cut, "cut_total", total, "budget_bytes", s.budget)
	}
	return func() { s.end(me) }
}

// end removes a finished answer, under s.mu: once it has run, begin
// cannot pick the answer, so a finished answer is never cut.
func (s *SendBudget) end(me *sending) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, x := range s.list {
		if x == me {
			s.list = append(s.list[:i], s.list[i+1:]...)
			s.bytes -= me.size
			return
		}
	}
}
