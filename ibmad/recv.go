package ibmad

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// The receive side of an engine: one goroutine receives every packet and
// hands it on without waiting for the transport: an answer to the pending
// table, a request to its handler, whose reply the reply workers send.
// Every packet received is delivered, handled or dropped and counted.

// Handler serves an unsolicited request. It fills resp (MAD and Addr) and
// returns true to send it. Handlers run on the receive goroutine: they must
// not block (no transport call: read the local port with CachedPort). The
// reply is written by the engine's reply workers.
type Handler func(req *Packet, resp *Packet) bool

type handlerKey struct {
	class   MgmtClass
	version uint8
	oui     OUI
	method  Method
}

// handlerTable holds the handlers by (class, version, oui, method). The
// receive goroutine reads the map without a lock; Handle and Unhandle
// replace it whole.
type handlerTable struct {
	m atomic.Pointer[map[handlerKey]Handler]

	mu         sync.Mutex          // serialises add and remove
	registered map[handlerKey]bool // with the transport; under mu
}

func (ht *handlerTable) init() {
	empty := map[handlerKey]Handler{}
	ht.m.Store(&empty)
}

// lookup returns the handler of k, or nil.
func (ht *handlerTable) lookup(k handlerKey) Handler { return (*ht.m.Load())[k] }

// Handle registers h for unsolicited requests of (class, version, oui,
// method) and asks the transport to deliver them. oui is ignored outside
// vendor range 2. A method already registered with the transport (by an
// earlier Handle, even one since Unhandled) is not registered again, so a
// handler can be replaced (a hosted agent reconfigured) on a transport
// that refuses duplicate registrations.
func (e *Engine) Handle(class MgmtClass, version uint8, oui OUI, methods []Method, rmpp bool, h Handler) error {
	if !class.IsVendorRange2() {
		oui = 0
	}
	ht := &e.handlers
	ht.mu.Lock()
	defer ht.mu.Unlock()
	var fresh []Method
	for _, meth := range methods {
		if !ht.registered[handlerKey{class, version, oui, meth}] {
			fresh = append(fresh, meth)
		}
	}
	if len(fresh) > 0 {
		if err := e.t.Register(Registration{Class: class, Version: version, OUI: oui, Methods: fresh, RMPP: rmpp}); err != nil {
			return fmt.Errorf("register class %s version %d oui %s: %w", class, version, oui, err)
		}
		if ht.registered == nil {
			ht.registered = map[handlerKey]bool{}
		}
		for _, meth := range fresh {
			ht.registered[handlerKey{class, version, oui, meth}] = true
		}
	}
	old := *ht.m.Load()
	m := make(map[handlerKey]Handler, len(old)+len(methods))
	for k, v := range old {
		m[k] = v
	}
	for _, meth := range methods {
		m[handlerKey{class, version, oui, meth}] = h
	}
	ht.m.Store(&m)
	return nil
}

// Unhandle removes every handler of (class, version, oui). The transport
// registration stays; requests that still arrive are dropped and counted.
func (e *Engine) Unhandle(class MgmtClass, version uint8, oui OUI) {
	if !class.IsVendorRange2() {
		oui = 0
	}
	ht := &e.handlers
	ht.mu.Lock()
	defer ht.mu.Unlock()
	old := *ht.m.Load()
	m := make(map[handlerKey]Handler, len(old))
	for k, v := range old {
		if k.class == class && k.version == version && k.oui == oui {
			continue
		}
		m[k] = v
	}
	ht.m.Store(&m)
}

func (e *Engine) recvLoop() {
	pkt := new(Packet)
	resp := new(Packet)
	for {
		err := e.t.Recv(pkt)
		if err == nil {
			e.dispatch(pkt, resp)
			continue
		}
		var de *DropError
		if errors.As(err, &de) {
			e.stats.received.Add(1)
			e.stats.drops[de.Reason.valid()].Add(1)
			continue
		}
		if errors.Is(err, ErrClosed) {
			e.pending.failAll(ErrClosed)
			return
		}
		e.stats.recvErrors.Add(1)
		err = deviceErr("receive", err)
		e.markLost(err)
		e.pending.failAll(err)
		select {
		case <-e.done:
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// dispatch routes one received packet: a response or timeout report to its
// waiter, a request to its handler. Anything else is dropped and counted.
func (e *Engine) dispatch(pkt, resp *Packet) {
	e.stats.received.Add(1)
	m := &pkt.MAD
	if m.BaseVersion() != 1 {
		e.stats.drops[DropMalformed].Add(1)
		return
	}
	meth := m.Method()
	switch {
	case pkt.TimedOut:
		e.stats.delivery(e.pending.timeoutReport(pkt))
		return
	case meth.IsResponse() || meth == MethodTrapRepress:
		e.stats.delivery(e.pending.answer(pkt))
		return
	}
	class := m.MgmtClass()
	var oui OUI
	if class.IsVendorRange2() {
		oui = m.OUI()
	}
	h := e.handlers.lookup(handlerKey{class, m.ClassVersion(), oui, meth})
	if h == nil {
		e.stats.drops[DropNoHandler].Add(1)
		return
	}
	*resp = Packet{}
	if !h(pkt, resp) {
		e.stats.handled.Add(1) // the handler declined and counts why
		return
	}
	e.reply(resp)
}

// replyWorkers send the agents' replies off the receive goroutine: the
// kernel's write can block while it resolves an address (about a second
// was seen on a RoCE port), and the receive goroutine must keep delivering
// the answers other requests wait for. Several workers, so that one
// reply that blocks does not hold up the others; a requester with as many
// replies queued as there are workers, each blocking, still can, and a
// full queue drops (counted).
const (
	replyWorkers = 4
	replyQueue   = 256
)

// reply queues a handler's reply; with the queue full it is dropped and
// counted (the requester retries).
func (e *Engine) reply(resp *Packet) {
	p := e.packets.Get().(*Packet)
	*p = *resp
	select {
	case e.replies <- p:
	default:
		e.packets.Put(p)
		e.stats.drops[DropSendFailed].Add(1)
	}
}

func (e *Engine) replyLoop() {
	for {
		select {
		case <-e.done:
			return
		case p := <-e.replies:
			e.sendReply(p)
			e.packets.Put(p)
		}
	}
}

// sendReply sends one reply. A refused reply is dropped and counted; only
// a device that is gone marks the engine lost.
func (e *Engine) sendReply(p *Packet) {
	if err := e.t.Send(p); err != nil {
		e.stats.drops[DropSendFailed].Add(1)
		if !errors.Is(err, ErrClosed) && classifySend(err) == sendGone {
			e.markLost(deviceErr("send", err))
		}
		return
	}
	e.stats.handled.Add(1)
	e.stats.responses.Add(1)
}
