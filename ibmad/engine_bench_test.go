package ibmad

import (
	"context"
	"testing"
	"time"
)

// echoTransport answers every request at once with its GetResp, from the
// LID asked, without allocating: what the engine itself allocates per
// MAD is all a benchmark on it counts.
type echoTransport struct {
	in   chan Packet
	done chan struct{}
}

func newEchoTransport() *echoTransport {
	return &echoTransport{in: make(chan Packet, 1024), done: make(chan struct{})}
}

func (t *echoTransport) Send(p *Packet) error {
	if p.MAD.Method().IsResponse() {
		return nil
	}
	select {
	case t.in <- *p:
	case <-t.done:
		return ErrClosed
	}
	return nil
}

func (t *echoTransport) Recv(p *Packet) error {
	select {
	case *p = <-t.in:
		p.MAD.SetMethod(p.MAD.Method().Response())
		return nil
	case <-t.done:
		return ErrClosed
	}
}

func (t *echoTransport) Register(Registration) error { return nil }
func (t *echoTransport) Port() (PortAttributes, error) {
	return PortAttributes{CA: "echo", PortNum: 1, LID: 1}, nil
}
func (t *echoTransport) Close() error {
	select {
	case <-t.done:
	default:
		close(t.done)
	}
	return nil
}

// benchDo runs Do b.N times over an echo transport, from parallel
// goroutines when parallel, and reports the allocations per MAD (each
// Do is one MAD and its answer).
func benchDo(b *testing.B, parallel bool) {
	e := NewEngine(newEchoTransport(), Options{Timeout: time.Second, MaxOutstanding: 1024, MaxPerTarget: 1024, PortRefresh: time.Hour})
	defer e.Close()
	var tmpl MAD
	_ = NewLIDGet(AttrNodeInfo, 0).MarshalTo(tmpl[:])
	do := func(req *Request, resp *Response) {
		if err := e.Do(context.Background(), req, resp); err != nil {
			b.Error(err)
		}
	}
	b.ReportAllocs()
	if !parallel {
		req := &Request{MAD: tmpl, Addr: SMPAddress(5)}
		var resp Response
		for b.Loop() {
			do(req, &resp)
		}
		return
	}
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		req := &Request{MAD: tmpl, Addr: SMPAddress(5)}
		var resp Response
		for pb.Next() {
			do(req, &resp)
		}
	})
}

// BenchmarkDo: allocations per MAD of one requester waiting for each
// answer (docs/architecture.md, "Pooled calls").
func BenchmarkDo(b *testing.B) { benchDo(b, false) }

// BenchmarkDoParallel: the same from many goroutines sharing one engine,
// as the tracer does.
func BenchmarkDoParallel(b *testing.B) { benchDo(b, true) }
