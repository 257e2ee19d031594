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
			if p := de.Packet; p != nil && de.Reason == DropTruncated && p.MAD.Method().IsResponse() {
				e.pending.refuse(p, fmt.Errorf("%w: %v", ErrAnswerTooLong, de.Err))
			}
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
// replies in the workers' hands as there are workers, each blocking,
// still can.
const (
	replyWorkers  = 4
	replyQueueLen = 256
)

// replyQueue holds the replies the workers have not taken yet: one FIFO
// per requester (RequesterOf the reply's destination), served in turn,
// at most replyQueueLen replies in all. When it is full, a reply takes
// the place of the newest reply of the requester with the most queued,
// and is dropped itself when that is its own requester (it would hold as
// many as the most). So a requester's burst, whatever its size, displaces
// only its own replies once the others' are fewer, and a requester that
// holds fewer replies than another loses none (docs/protocol.md, "What
// the agent answers").
type replyQueue struct {
	mu    sync.Mutex
	fifo  map[Requester][]*Packet // oldest first; no empty FIFO is kept
	turn  []Requester             // requesters with replies queued, the next served first
	n     int                     // replies queued
	ready chan struct{}           // one token per reply queued: never more than replyQueueLen
	// dropped counts the replies dropped since the queue was last
	// empty: the first is logged, and the sum when it empties.
	dropped uint64
}

func (rq *replyQueue) init() {
	rq.fifo = map[Requester][]*Packet{}
	rq.ready = make(chan struct{}, replyQueueLen)
}

// push queues p for r. It returns the reply dropped to make room (p
// itself when r would hold the most), nil when there was room, the
// requester it was for, and whether it is the first drop since the
// queue was last empty.
func (rq *replyQueue) push(r Requester, p *Packet) (dropped *Packet, of Requester, first bool) {
	rq.mu.Lock()
	defer rq.mu.Unlock()
	if rq.n == replyQueueLen {
		longest := r
		for k, q := range rq.fifo {
			if len(q) > len(rq.fifo[longest]) {
				longest = k
			}
		}
		rq.dropped++
		if len(rq.fifo[longest]) <= len(rq.fifo[r])+1 { // with p, r would hold the most
			return p, r, rq.dropped == 1
		}
		// longest holds more than r with p: it keeps at least one.
		q := rq.fifo[longest]
		dropped, q[len(q)-1] = q[len(q)-1], nil
		rq.fifo[longest] = q[:len(q)-1]
		of, first = longest, rq.dropped == 1
		rq.n--
	}
	q := rq.fifo[r]
	if len(q) == 0 {
		rq.turn = append(rq.turn, r)
	}
	rq.fifo[r] = append(q, p)
	rq.n++
	if dropped == nil {
		rq.ready <- struct{}{} // else the dropped reply's token stands for p
	}
	return dropped, of, first
}

// pop takes the oldest reply of the requester whose turn it is (the
// caller took a token from ready), and says how many replies were
// dropped since the queue was last empty when this one empties it.
func (rq *replyQueue) pop() (p *Packet, droppedBefore uint64) {
	rq.mu.Lock()
	defer rq.mu.Unlock()
	r := rq.turn[0]
	q := rq.fifo[r]
	p, q[0] = q[0], nil
	rq.turn = rq.turn[1:]
	if len(q) == 1 {
		delete(rq.fifo, r)
	} else {
		rq.fifo[r] = q[1:]
		rq.turn = append(rq.turn, r)
	}
	if rq.n--; rq.n == 0 {
		droppedBefore, rq.dropped = rq.dropped, 0
	}
	return p, droppedBefore
}

// reply queues a handler's reply for the reply workers. With the queue
// full a reply is dropped (the newest of the requester with the most
// queued) and counted; the log says so at the first drop and how many
// when the queue is empty again. The requester retries.
func (e *Engine) reply(resp *Packet) {
	p := e.packets.Get().(*Packet)
	*p = *resp
	var prefix uint64
	if port := e.port.Load(); port != nil {
		prefix = port.attrs.GIDPrefix
	}
	dropped, of, first := e.replies.push(RequesterOf(p.Addr, prefix), p)
	if dropped == nil {
		return
	}
	e.packets.Put(dropped)
	e.stats.drops[DropReplyQueueFull].Add(1)
	if first && e.opts.Log != nil {
		e.opts.Log("the reply queue is full: dropping the newest replies of the requester with the most queued",
			"requester", of.String(), "queue", replyQueueLen, "counted_in", `ibtracer_mad_dropped_total{reason="reply_queue_full"}`)
	}
}

func (e *Engine) replyLoop() {
	for {
		select {
		case <-e.done:
			return
		case <-e.replies.ready:
			p, dropped := e.replies.pop()
			e.sendReply(p)
			e.packets.Put(p)
			if dropped > 0 && e.opts.Log != nil {
				e.opts.Log("the reply queue is empty again", "replies_dropped", dropped)
			}
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
