package sim

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// QueueDepth is how many received MADs a Transport buffers; more are
// dropped and counted, as a kernel receive list would.
const QueueDepth = 1024

// Transport is an ibmad.Transport attached at one port of a simulated node.
type Transport struct {
	f     *Fabric
	node  *Node
	port  *Port
	hiTID uint32

	mu   sync.Mutex
	regs []ibmad.Registration

	// The receive queue grows as MADs arrive, up to QueueDepth: most
	// transports (the agents of a large fabric) rarely hold more than one.
	qmu       sync.Mutex
	q         []*ibmad.Packet // q[qhead:] waits, oldest first
	qhead     int
	ready     chan struct{} // a token: the queue may hold a MAD
	closed    chan struct{}
	closeOnce sync.Once
	pool      sync.Pool
	overflow  atomic.Uint64
	all       atomic.Bool // AcceptAll

	// askedOn is, by TID, the LID of the node's port a request reached
	// this transport through when that is not the transport's own port
	// (a CA's other port): its answer leaves from the port asked, as a
	// real responder's does from the port it was asked on. Bounded:
	// cleared when it holds askedOnMax requests nobody answered.
	amu     sync.Mutex
	askedOn map[uint64]uint16

	// sent counts the sendings of each MAD for drop keys (loss.go).
	smu  sync.Mutex
	sent map[uint64]uint32
}

const askedOnMax = 4096

// askedThrough records that the request of tid reached t through port
// lid of its node.
func (t *Transport) askedThrough(tid uint64, lid uint16) {
	t.amu.Lock()
	if t.askedOn == nil || len(t.askedOn) >= askedOnMax {
		t.askedOn = map[uint64]uint16{}
	}
	t.askedOn[tid] = lid
	t.amu.Unlock()
}

// answerFrom is the source LID of t's answer to the request of tid: the
// port it was asked through, t's own when none was recorded.
func (t *Transport) answerFrom(tid uint64) uint16 {
	t.amu.Lock()
	defer t.amu.Unlock()
	if lid, ok := t.askedOn[tid]; ok {
		delete(t.askedOn, tid)
		return lid
	}
	return t.port.LID
}

var _ ibmad.Transport = (*Transport)(nil)

// Node returns the node the transport is attached to.
func (t *Transport) Node() *Node { return t.node }

// Overflows returns the number of MADs dropped because the queue was full.
func (t *Transport) Overflows() uint64 { return t.overflow.Load() }

// Register records which unsolicited requests this transport accepts.
func (t *Transport) Register(r ibmad.Registration) error {
	if r.Class.IsVendorRange2() && r.OUI == 0 {
		return fmt.Errorf("sim: vendor class %s needs a non-zero OUI", r.Class)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, o := range t.regs {
		if o.Class == r.Class && o.Version == r.Version && o.OUI == r.OUI {
			for _, m := range o.Methods {
				for _, n := range r.Methods {
					if m == n {
						return fmt.Errorf("sim: class %s version %d method %s already registered on this transport", r.Class, r.Version, m)
					}
				}
			}
		}
	}
	t.regs = append(t.regs, r)
	return nil
}

// Unregister removes every registration of class (and oui), as an agent
// that exits would.
func (t *Transport) Unregister(class ibmad.MgmtClass, oui ibmad.OUI) {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := t.regs[:0]
	for _, r := range t.regs {
		if r.Class == class && (!class.IsVendorRange2() || r.OUI == oui) {
			continue
		}
		out = append(out, r)
	}
	t.regs = out
}

func (t *Transport) accepts(m *ibmad.MAD) bool {
	if t.all.Load() {
		return true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	class, meth := m.MgmtClass(), m.Method()
	for _, r := range t.regs {
		if r.Class != class || r.Version != m.ClassVersion() {
			continue
		}
		if class.IsVendorRange2() && r.OUI != m.OUI() {
			continue
		}
		for _, x := range r.Methods {
			if x == meth {
				return true
			}
		}
	}
	return false
}

// Port describes the attached port.
func (t *Transport) Port() (ibmad.PortAttributes, error) {
	f := t.f
	f.mu.RLock()
	defer f.mu.RUnlock()
	return ibmad.PortAttributes{
		CA: t.node.Name, PortNum: t.port.Num, NodeType: t.node.Type,
		NodeGUID: t.node.GUID, PortGUID: t.node.portGUID(t.port.Num), NodeDesc: t.node.Desc,
		LID: t.port.LID, LMC: t.port.LMC, SMLID: f.smLIDLocked(), GIDPrefix: f.opts.GIDPrefix,
		State: t.port.State, PhysState: t.port.Phys,
	}, nil
}

// Recv blocks until a MAD arrives or the transport is closed.
func (t *Transport) Recv(p *ibmad.Packet) error {
	for {
		if q := t.pop(); q != nil {
			*p = *q
			t.pool.Put(q)
			return nil
		}
		select {
		case <-t.ready:
		case <-t.closed:
			return ibmad.ErrClosed
		}
	}
}

// pop takes the oldest queued MAD, or nil.
func (t *Transport) pop() *ibmad.Packet {
	t.qmu.Lock()
	defer t.qmu.Unlock()
	if t.qhead == len(t.q) {
		return nil
	}
	p := t.q[t.qhead]
	t.q[t.qhead] = nil
	t.qhead++
	if t.qhead == len(t.q) {
		t.qhead = 0
		t.q = t.q[:0]
		if cap(t.q) > 64 {
			t.q = nil // a burst's backing array goes
		}
	} else {
		t.signal() // another receiver may wait for the rest
	}
	return p
}

// signal leaves a token for a receiver; it never blocks.
func (t *Transport) signal() {
	select {
	case t.ready <- struct{}{}:
	default:
	}
}

// Close detaches the transport: its node stops delivering to it.
func (t *Transport) Close() error {
	t.closeOnce.Do(func() {
		close(t.closed)
		t.node.detach(t)
	})
	return nil
}

func (t *Transport) isClosed() bool {
	select {
	case <-t.closed:
		return true
	default:
		return false
	}
}

// packet returns a free packet for delivery to t.
func (t *Transport) packet() *ibmad.Packet { return t.pool.Get().(*ibmad.Packet) }

// enqueue hands p to t's receiver; it never blocks.
func (t *Transport) enqueue(p *ibmad.Packet) {
	if t.isClosed() {
		t.pool.Put(p)
		return
	}
	t.qmu.Lock()
	if len(t.q)-t.qhead >= QueueDepth {
		t.qmu.Unlock()
		t.overflow.Add(1)
		t.pool.Put(p)
		return
	}
	if len(t.q) == cap(t.q) && t.qhead > 0 { // reuse the taken slots
		n := copy(t.q, t.q[t.qhead:])
		clear(t.q[n:])
		t.q, t.qhead = t.q[:n], 0
	}
	t.q = append(t.q, p)
	t.qmu.Unlock()
	t.signal()
}

// Send injects p into the fabric from the attached port.
func (t *Transport) Send(p *ibmad.Packet) error {
	if t.isClosed() {
		return ibmad.ErrClosed
	}
	f := t.f
	f.mads.Add(1)
	m := &p.MAD
	meth := m.Method()
	isResp := meth.IsResponse() || meth == ibmad.MethodTrapRepress
	tid := m.TID()
	if !isResp {
		// The kernel owns the upper 32 bits of a request's TID (docs/protocol.md).
		tid = uint64(t.hiTID)<<32 | uint64(m.TIDLow())
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	fl := flight{t: t, p: p}
	switch {
	case f.smpRefused(t, m, isResp):
		// dropped: the sender times out
	case m.MgmtClass() == ibmad.ClassSubnDR:
		if isResp {
			return nil // the fabric's SMAs answer directed-route SMPs themselves
		}
		f.sendDR(&fl, tid)
	default:
		f.sendLID(&fl, tid, isResp)
	}
	if !fl.delivered && f.opts.ReportLoss {
		fl.reportLoss(tid, isResp)
	}
	return nil
}

// AcceptAll makes t take every request that reaches its node and that the
// fabric does not answer itself (the SMA, the SA at the SM node and the
// PMA answer theirs), whatever its class: the way ibsim hands such
// requests to a client that connected with its "issm" flag. A socket
// server (package simserve) uses it for such a client, whose own
// registrations live on the other side of the socket.
func (t *Transport) AcceptAll(on bool) { t.all.Store(on) }

// NodeInfo returns the NodeInfo the attached node's SMA answers through
// the attached port.
func (t *Transport) NodeInfo() ibmad.NodeInfo {
	t.f.mu.RLock()
	defer t.f.mu.RUnlock()
	return t.node.nodeInfo(t.port)
}

// PortInfo returns PortInfo of port num of the attached node as its SMA
// answers it through the attached port; num 0 on a CA is the attached
// port. ok is false when the node has no such port.
func (t *Transport) PortInfo(num int) (pi ibmad.PortInfo, ok bool) {
	n := t.node
	if num == 0 && !n.IsSwitch() {
		num = int(t.port.Num)
	}
	if num < 0 || num > n.NumPorts() {
		return pi, false
	}
	t.f.mu.RLock()
	defer t.f.mu.RUnlock()
	return n.portInfo(n.Ports[num], t.port), true
}

// PortNum returns the number of the attached port (0 on a switch).
func (t *Transport) PortNum() uint8 { return t.port.Num }

// LID returns the attached port's base LID (a switch's port 0 LID).
func (t *Transport) LID() uint16 {
	t.f.mu.RLock()
	defer t.f.mu.RUnlock()
	return t.port.LID
}

// attach adds t to the transports n delivers to.
func (n *Node) attach(t *Transport) {
	for {
		old := n.transports.Load()
		var list []*Transport
		if old != nil {
			list = append(list, *old...)
		}
		list = append(list, t)
		if n.transports.CompareAndSwap(old, &list) {
			return
		}
	}
}

// detach removes t from the transports n delivers to.
func (n *Node) detach(t *Transport) {
	for {
		old := n.transports.Load()
		var list []*Transport
		for _, x := range *old {
			if x != t {
				list = append(list, x)
			}
		}
		if n.transports.CompareAndSwap(old, &list) {
			return
		}
	}
}

func (n *Node) transportList() []*Transport {
	if l := n.transports.Load(); l != nil {
		return *l
	}
	return nil
}

func (n *Node) transportByHiTID(hi uint32) *Transport {
	for _, t := range n.transportList() {
		if t.hiTID == hi {
			return t
		}
	}
	return nil
}
