package ibmad

import (
	"context"
	"sync"
	"testing"
	"time"
)

// lossyTransport loses every request it is sent, remembering it, and
// delivers what the test puts in in.
type lossyTransport struct {
	mu   sync.Mutex
	sent []Packet
	in   chan Packet
	done chan struct{}
	once sync.Once
}

func (l *lossyTransport) Send(p *Packet) error {
	l.mu.Lock()
	l.sent = append(l.sent, *p)
	l.mu.Unlock()
	return nil
}

func (l *lossyTransport) Recv(p *Packet) error {
	select {
	case *p = <-l.in:
		return nil
	case <-l.done:
		return ErrClosed
	}
}

func (l *lossyTransport) Register(Registration) error   { return nil }
func (l *lossyTransport) Port() (PortAttributes, error) { return PortAttributes{}, nil }
func (l *lossyTransport) Close() error                  { l.once.Do(func() { close(l.done) }); return nil }

// A long-running exporter must not accumulate engine state: every attempt
// of a request keeps its TID mapped while the request waits (so a late
// answer to an earlier attempt still completes it), but once Do returns
// none of them stays, and answers that arrive later still find nothing
// and are counted as unknown (the soak, scripts/soak.sh, runs this path
// a few times a second under --sim.faults).
func TestEngineForgetsTIDsOfFinishedRequests(t *testing.T) {
	l := &lossyTransport{in: make(chan Packet), done: make(chan struct{})}
	e := NewEngine(l, Options{PortRefresh: time.Hour})
	defer e.Close()

	const requests, retries = 64, 2
	var wg sync.WaitGroup
	for i := 0; i < requests; i++ {
		wg.Add(1)
		go func(lid uint16) {
			defer wg.Done()
			req := &Request{Addr: SMPAddress(lid), Timeout: 2 * time.Millisecond, Retries: retries}
			g := NewLIDGet(AttrNodeInfo, 0)
			_ = g.MarshalTo(req.MAD[:])
			if err := e.Do(context.Background(), req, &Response{}); err == nil {
				t.Errorf("LID %d: answered by a transport that answers nothing", lid)
			}
		}(uint16(1 + i%8)) // several requests per target
	}
	wg.Wait()
	l.mu.Lock()
	sent := append([]Packet(nil), l.sent...)
	l.mu.Unlock()
	if len(sent) != requests*(retries+1) {
		t.Fatalf("%d attempts sent, want %d", len(sent), requests*(retries+1))
	}
	e.pending.mu.Lock()
	pending := len(e.pending.calls)
	e.pending.mu.Unlock()
	e.window.mu.Lock()
	targets := len(e.window.targets)
	e.window.mu.Unlock()
	if pending != 0 || targets != 0 {
		t.Fatalf("after every request returned: %d TIDs and %d targets still mapped", pending, targets)
	}

	// Every attempt answered, late.
	before := e.Stats().Drops[DropUnknownTID]
	for _, p := range sent {
		p.MAD.SetMethod(MethodGetResp)
		l.in <- p
	}
	deadline := time.Now().Add(30 * time.Second)
	for e.Stats().Drops[DropUnknownTID]-before < uint64(len(sent)) {
		if time.Now().After(deadline) {
			t.Fatalf("late answers counted as unknown: %d of %d", e.Stats().Drops[DropUnknownTID]-before, len(sent))
		}
		time.Sleep(time.Millisecond)
	}
	e.pending.mu.Lock()
	pending = len(e.pending.calls)
	e.pending.mu.Unlock()
	if pending != 0 {
		t.Fatalf("late answers left %d TIDs mapped", pending)
	}
}
