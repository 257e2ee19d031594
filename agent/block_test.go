package agent

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/madtest"
)

// slowPortTransport answers the first Port at once and blocks every later
// one until released: ibsim's Port is a control round trip that can take
// seconds.
type slowPortTransport struct {
	*madtest.Transport
	calls   atomic.Int32
	release chan struct{}
}

func (s *slowPortTransport) Port() (ibmad.PortAttributes, error) {
	if s.calls.Add(1) > 1 {
		<-s.release
	}
	return s.Transport.Port()
}

// TestSlowPortDoesNotBlockReceive: a handler runs on the receive goroutine,
// so it must never wait for the transport's Port. Requests keep being
// answered and responses delivered while Port blocks, for longer than the
// engine's port cache lives.
func TestSlowPortDoesNotBlockReceive(t *testing.T) {
	out := make(chan *ibmad.Packet, 64)
	mt := madtest.New(func(p *ibmad.Packet) []*ibmad.Packet {
		if p.MAD.MgmtClass().IsSMP() {
			return madtest.Echo(p)
		}
		cp := *p
		out <- &cp
		return nil
	})
	mt.Attrs = ibmad.PortAttributes{CA: "fake", PortNum: 1, NodeType: ibmad.NodeTypeCA, NodeGUID: 0x1111, PortGUID: 0x1112, LID: 42}
	tr := &slowPortTransport{Transport: mt, release: make(chan struct{})}
	var once sync.Once
	unblock := func() { once.Do(func() { close(tr.release) }) }
	e := ibmad.NewEngine(tr, ibmad.Options{})
	t.Cleanup(func() { unblock(); e.Close() })
	if _, err := New(e, Config{RatePerSource: 1e6}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for i := 0; time.Since(start) < 2500*time.Millisecond; i++ {
		v := ibmad.NewVendorGet(ibmad.ClassIBTracer, ibmad.OUIOpenIB, ibmad.AttrSourceRoute, 0)
		v.TID = uint64(0x1000 + i)
		_ = route(1, 1).MarshalTo(v.Data[:])
		p := &ibmad.Packet{Addr: ibmad.Address{LID: 7, QPN: 1}, InPort: 1, InPortKnown: true}
		_ = v.MarshalTo(p.MAD[:])
		mt.Inject(p)
		select {
		case resp := <-out:
			if sr := decode(t, resp); sr.PortGUID != 0x1112 || sr.BaseLID != 42 {
				t.Fatalf("answer %d carries port GUID %s LID %d", i, sr.PortGUID, sr.BaseLID)
			}
		case <-time.After(time.Second):
			t.Fatalf("request %d at %v: no answer within 1s: the receive goroutine is blocked (Port calls: %d)",
				i, time.Since(start).Round(time.Millisecond), tr.calls.Load())
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		req := &ibmad.Request{Addr: ibmad.SMPAddress(5), NoRetry: true}
		s := ibmad.NewLIDGet(ibmad.AttrNodeInfo, 0)
		_ = s.MarshalTo(req.MAD[:])
		err := e.Do(ctx, req, &ibmad.Response{})
		cancel()
		if err != nil {
			t.Fatalf("request %d at %v: a response was not delivered: %v", i, time.Since(start).Round(time.Millisecond), err)
		}
	}
}
