package ibmad

import (
	"errors"
	"fmt"
	"time"
)

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
	e.hmu.Lock()
	defer e.hmu.Unlock()
	var fresh []Method
	for _, meth := range methods {
		if !e.registered[handlerKey{class, version, oui, meth}] {
			fresh = append(fresh, meth)
		}
	}
	if len(fresh) > 0 {
		if err := e.t.Register(Registration{Class: class, Version: version, OUI: oui, Methods: fresh, RMPP: rmpp}); err != nil {
			return fmt.Errorf("register class %s version %d oui %s: %w", class, version, oui, err)
		}
		if e.registered == nil {
			e.registered = map[handlerKey]bool{}
		}
		for _, meth := range fresh {
			e.registered[handlerKey{class, version, oui, meth}] = true
		}
	}
	old := *e.handlers.Load()
	m := make(map[handlerKey]Handler, len(old)+len(methods))
	for k, v := range old {
		m[k] = v
	}
	for _, meth := range methods {
		m[handlerKey{class, version, oui, meth}] = h
	}
	e.handlers.Store(&m)
	return nil
}

// Unhandle removes every handler of (class, version, oui). The transport
// registration stays; requests that still arrive are dropped and counted.
func (e *Engine) Unhandle(class MgmtClass, version uint8, oui OUI) {
	if !class.IsVendorRange2() {
		oui = 0
	}
	e.hmu.Lock()
	defer e.hmu.Unlock()
	old := *e.handlers.Load()
	m := make(map[handlerKey]Handler, len(old))
	for k, v := range old {
		if k.class == class && k.version == version && k.oui == oui {
			continue
		}
		m[k] = v
	}
	e.handlers.Store(&m)
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
			e.failAll(ErrClosed)
			return
		}
		e.stats.recvErrors.Add(1)
		err = deviceErr("receive", err)
		e.markLost(err)
		e.failAll(err)
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
	class := m.MgmtClass()
	if pkt.TimedOut {
		e.mu.Lock()
		c := e.pending[m.TIDLow()]
		if c != nil && c.stream != nil {
			e.toStream(c, pkt)
			e.mu.Unlock()
			return
		}
		if c != nil && c.current == m.TIDLow() && c.result == resultNone {
			c.result = resultTimeoutReport
			c.done <- struct{}{}
			e.mu.Unlock()
			e.stats.delivered.Add(1)
			return
		}
		e.mu.Unlock()
		// No attempt waits for this report: an earlier attempt's, or not ours.
		e.stats.drops[DropUnknownTID].Add(1)
		return
	}
	meth := m.Method()
	if meth.IsResponse() || meth == MethodTrapRepress {
		e.mu.Lock()
		c := e.pending[m.TIDLow()]
		if c == nil || c.class != class {
			e.mu.Unlock()
			e.stats.drops[DropUnknownTID].Add(1)
			return
		}
		if why, ok := c.want.match(pkt, e.localLMC()); !ok {
			// Not the answer to what c asked: a forgery or a stray.
			// The request waits on for its own.
			e.mu.Unlock()
			e.stats.drops[why].Add(1)
			return
		}
		if c.stream != nil {
			e.toStream(c, pkt)
			e.mu.Unlock()
			return
		}
		if c.result != resultNone {
			// The waiter is still handling a timeout report or an error:
			// this answer is late and the next attempt will get its own.
			e.mu.Unlock()
			e.stats.drops[DropLate].Add(1)
			return
		}
		for _, t := range c.tids {
			delete(e.pending, t)
		}
		c.resp.MAD = pkt.MAD
		c.resp.Addr = pkt.Addr
		c.result = resultResponse
		c.done <- struct{}{}
		e.mu.Unlock()
		e.stats.delivered.Add(1)
		return
	}
	var oui OUI
	if class.IsVendorRange2() {
		oui = m.OUI()
	}
	h := (*e.handlers.Load())[handlerKey{class, m.ClassVersion(), oui, meth}]
	if h == nil {
		e.stats.drops[DropNoHandler].Add(1)
		return
	}
	*resp = Packet{}
	if !h(pkt, resp) {
		e.stats.handled.Add(1) // the handler declined and counts why
		return
	}
	e.reply(resp) // engine_senderr.go
}
