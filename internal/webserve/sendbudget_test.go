package webserve

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// servedWriter is a ResponseWriter that knows whether its handler has
// returned (served): net/http's ResponseController may not be used
// after that, and the connection's write deadline it sets would land on
// the connection's next keep-alive answer.
type servedWriter struct {
	discardWriter
	mu        sync.Mutex
	served    bool
	deadlines int // SetWriteDeadline calls while the handler ran
	late      int // SetWriteDeadline calls after it returned
}

func (w *servedWriter) SetWriteDeadline(time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.served {
		w.late++
	} else {
		w.deadlines++
	}
	return nil
}

func (w *servedWriter) returned() {
	w.mu.Lock()
	w.served = true
	w.mu.Unlock()
}

func (w *servedWriter) counts() (deadlines, late int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.deadlines, w.late
}

// TestCutNeverTouchesAFinishedAnswer: answer A is being sent when B's
// begin finds the budget full and picks A to cut. Right after B's begin
// releases the lock (the picked hook), A's handler finishes: its end
// runs and it returns. B must not then set the write deadline of A's
// ResponseWriter (its handler has returned; its connection may be
// serving the next request). A cut is a deadline set while the victim
// was still being sent, and only such a cut is counted.
func TestCutNeverTouchesAFinishedAnswer(t *testing.T) {
	s := &SendBudget{budget: 100, logger: log.NewNopLogger(), cut: prometheus.NewCounter(prometheus.CounterOpts{Name: "cut"})}
	a := &servedWriter{discardWriter: discardWriter{header: http.Header{}}}
	b := &servedWriter{discardWriter: discardWriter{header: http.Header{}}}
	endA := s.Begin(a, 80)
	s.picked = func() {
		s.picked = nil
		endA()
		a.returned()
	}
	endB := s.Begin(b, 80)
	defer endB()
	deadlines, late := a.counts()
	if late != 0 {
		t.Fatalf("the write deadline of A was set %d time(s) after its handler returned (and %d before)", late, deadlines)
	}
	if cut := testutil.ToFloat64(s.cut); cut != float64(deadlines) {
		t.Fatalf("%v answers counted cut, %d deadline(s) set while A was sent", cut, deadlines)
	}
	if d, l := b.counts(); d+l != 0 {
		t.Fatalf("the new answer B got %d deadline(s)", d+l)
	}
	// A's end, run after it was cut, released nothing twice.
	s.mu.Lock()
	bytes, n := s.bytes, len(s.list)
	s.mu.Unlock()
	if bytes != 80 || n != 1 {
		t.Fatalf("%d bytes in %d answers after the cut, want B's 80 in 1", bytes, n)
	}
}

// discardWriter is a ResponseWriter that keeps nothing.
type discardWriter struct {
	header http.Header
	code   int
	n      int
}

func (w *discardWriter) Header() http.Header { return w.header }
func (w *discardWriter) WriteHeader(c int) {
	if w.code == 0 {
		w.code = c
	}
}
func (w *discardWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.n += len(p)
	return len(p), nil
}
