package collector

import (
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/ibtracer/ibtracer_exporter/linkhealth"
)

// gateLogger holds its first line until release is closed, as a slow
// log writer would; it records every line's msg in order.
type gateLogger struct {
	mu       sync.Mutex
	msgs     []string
	entered  chan struct{} // nil once the first line came
	entered0 chan struct{} // closed when the first line came
	release  chan struct{}
}

func (g *gateLogger) Log(kv ...any) error {
	g.mu.Lock()
	first := g.entered != nil
	g.entered = nil
	g.mu.Unlock()
	if first { // the line is out once the writer is done with it
		close(g.entered0)
		<-g.release
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i] == "msg" {
			g.msgs = append(g.msgs, kv[i+1].(string))
		}
	}
	return nil
}

// TestCtrLogLinesInTheOrderObserved: two destinations record the same
// link, its counters unavailable and then available again; while the
// first line is being written (a slow log writer), the second waits, so
// the log's last word on the link is the state the exporter holds.
func TestCtrLogLinesInTheOrderObserved(t *testing.T) {
	var c ctrLog
	ok := &linkhealth.PathHealth{Links: []linkhealth.Link{*ctrLink("ok", "ok")}}
	bad := &linkhealth.PathHealth{Links: []linkhealth.Link{*ctrLink("unavailable", "ok")}}
	c.observeAndLog(log.NewNopLogger(), ok) // first seen with counters: no line
	entered := make(chan struct{})
	g := &gateLogger{entered: entered, entered0: entered, release: make(chan struct{})}
	done1, done2 := make(chan struct{}), make(chan struct{})
	go func() { c.observeAndLog(g, bad); close(done1) }()
	<-entered // "unavailable" is being written
	go func() { c.observeAndLog(g, ok); close(done2) }()
	select { // the second line must wait; without the order it is written at once
	case <-done2:
	case <-time.After(200 * time.Millisecond):
	}
	close(g.release)
	<-done1
	<-done2
	want := []string{"link counters unavailable", "link counters available again"}
	if len(g.msgs) != 2 || g.msgs[0] != want[0] || g.msgs[1] != want[1] {
		t.Fatalf("logged %q, want %q", g.msgs, want)
	}
}
