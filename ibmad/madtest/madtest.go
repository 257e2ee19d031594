package madtest

import (
	"sync"
	"sync/atomic"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// Func decides what happens to a sent packet: it returns the packets to
// deliver back (none drops it).
type Func func(sent *ibmad.Packet) []*ibmad.Packet

// Transport is a fake ibmad.Transport driven by a Func.
type Transport struct {
	fn     Func
	queue  chan *ibmad.Packet
	closed chan struct{}
	once   sync.Once
	Sent   atomic.Uint64
	mu     sync.Mutex
	regs   []ibmad.Registration
	// SendErr, if set, is returned by Send.
	SendErr atomic.Pointer[error]
	Attrs   ibmad.PortAttributes
}

// New returns a Transport that runs fn on every sent packet.
func New(fn Func) *Transport {
	return &Transport{fn: fn, queue: make(chan *ibmad.Packet, 4096), closed: make(chan struct{}),
		Attrs: ibmad.PortAttributes{CA: "madtest", PortNum: 1, NodeType: ibmad.NodeTypeCA, LID: 1,
			State: ibmad.PortStateActive, PhysState: ibmad.PhysStateLinkUp}}
}

// Echo answers every request with a GetResp carrying the same MAD.
func Echo(sent *ibmad.Packet) []*ibmad.Packet {
	if sent.MAD.Method().IsResponse() {
		return nil
	}
	r := *sent
	r.MAD.SetMethod(ibmad.MethodGetResp)
	return []*ibmad.Packet{&r}
}

// Send runs the Func and queues what it returns.
func (t *Transport) Send(p *ibmad.Packet) error {
	select {
	case <-t.closed:
		return ibmad.ErrClosed
	default:
	}
	if e := t.SendErr.Load(); e != nil {
		return *e
	}
	t.Sent.Add(1)
	if t.fn == nil {
		return nil
	}
	for _, r := range t.fn(p) {
		t.Inject(r)
	}
	return nil
}

// Inject queues p for Recv as if it had arrived.
func (t *Transport) Inject(p *ibmad.Packet) {
	select {
	case t.queue <- p:
	case <-t.closed:
	}
}

// Recv returns the next queued packet.
func (t *Transport) Recv(p *ibmad.Packet) error {
	select {
	case q := <-t.queue:
		*p = *q
		return nil
	case <-t.closed:
		return ibmad.ErrClosed
	}
}

// Register records r.
func (t *Transport) Register(r ibmad.Registration) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.regs = append(t.regs, r)
	return nil
}

// Registrations returns what was registered.
func (t *Transport) Registrations() []ibmad.Registration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]ibmad.Registration(nil), t.regs...)
}

// Port returns Attrs.
func (t *Transport) Port() (ibmad.PortAttributes, error) { return t.Attrs, nil }

// Close unblocks Recv.
func (t *Transport) Close() error {
	t.once.Do(func() { close(t.closed) })
	return nil
}
