package collector

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

// metricsHandler is MetricsHandler with a budget of bytes for the
// answers being sent (renderFirst), counted in
// ibtracer_http_answers_cut_total, registered on reg.
func metricsHandler(reg *prometheus.Registry, maxInFlight int, budget int64, logger log.Logger) http.Handler {
	s := &senders{budget: budget, logger: logger, cut: prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: namespace, Subsystem: "http", Name: "answers_cut_total",
		Help: "/metrics answers cut off while being sent, oldest first, to keep the memory of the answers waiting on slow clients within its budget.",
	})}
	reg.MustRegister(s.cut)
	return limitInFlight(maxInFlight, renderFirst(s, promHandler(reg, logger)))
}

// senders bounds the memory of rendered answers waiting on their
// clients: past the budget, the answer that has been sending longest is
// cut off (its connection's write deadline set to now, so its write
// fails and its memory is freed) to make room for the new one, which is
// always sent (docs/architecture.md, "HTTP server limits").
type senders struct {
	budget int64
	logger log.Logger
	cut    prometheus.Counter
	mu     sync.Mutex
	bytes  int64
	list   []*sending // oldest first
	total  uint64
}

type sending struct {
	size int64
	w    http.ResponseWriter
}

// begin registers an answer of size bytes about to be sent to w and
// returns the function that ends it.
func (s *senders) begin(w http.ResponseWriter, size int64) (end func()) {
	me := &sending{size: size, w: w}
	s.mu.Lock()
	s.list = append(s.list, me)
	s.bytes += size
	var victims []*sending
	for s.bytes > s.budget && len(s.list) > 1 {
		victims = append(victims, s.list[0])
		s.bytes -= s.list[0].size
		s.list = s.list[1:]
	}
	s.total += uint64(len(victims))
	total := s.total
	s.mu.Unlock()
	for _, v := range victims {
		_ = http.NewResponseController(v.w).SetWriteDeadline(time.Now())
		s.cut.Inc()
	}
	if len(victims) > 0 {
		level.Warn(s.logger).Log("msg", "cut off /metrics answers waiting on clients that do not read, to stay within the memory budget",
			"cut", len(victims), "cut_total", total, "budget_bytes", s.budget)
	}
	return func() { s.end(me) }
}

func (s *senders) end(me *sending) {
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
