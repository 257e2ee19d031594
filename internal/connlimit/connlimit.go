package connlimit

import (
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// Limiter admits at most Max connections at once over the listeners it
// wraps. Give its ConnState to the http.Server, so that it knows which
// connections wait for a request (idle between keep-alive requests, or
// new): when all are taken and another connection arrives, it closes the
// keep-alive connection idle longest, or if none is idle the new one that
// has waited longest for its first request; when none waits, the new
// connection waits (in the kernel's backlog, beyond the one being
// admitted) until one closes or starts waiting.
type Limiter struct {
	max     int
	slots   chan struct{}
	wake    chan struct{} // a connection started waiting for a request
	mu      sync.Mutex
	seq     uint64
	waiting map[*conn]wait
	evicted atomic.Uint64
	// OnEvict, if set before the limiter is used, is called after each
	// connection closed to make room, with how many have been so far.
	OnEvict func(total uint64)
}

// New returns a limiter of n connections (at least 1).
func New(n int) *Limiter {
	n = max(n, 1)
	return &Limiter{max: n, slots: make(chan struct{}, n), wake: make(chan struct{}, 1), waiting: map[*conn]wait{}}
}

// Max is the limit.
func (l *Limiter) Max() int { return l.max }

// Open is how many connections are open now.
func (l *Limiter) Open() int { return len(l.slots) }

// Evicted is how many connections were closed to make room.
func (l *Limiter) Evicted() uint64 { return l.evicted.Load() }

// Listen wraps ln: its Accept admits a connection only within the limit.
func (l *Limiter) Listen(ln net.Listener) net.Listener {
	return &listener{Listener: ln, lim: l, done: make(chan struct{})}
}

// ConnState is the http.Server's ConnState hook.
func (l *Limiter) ConnState(nc net.Conn, s http.ConnState) {
	c, ok := unwrap(nc)
	if !ok {
		return
	}
	switch s {
	case http.StateNew:
		l.startWaiting(c, false)
	case http.StateIdle:
		l.startWaiting(c, true)
	default: // active, hijacked, closed
		l.stopWaiting(c)
	}
}

func unwrap(nc net.Conn) (*conn, bool) {
	if t, ok := nc.(*tls.Conn); ok {
		nc = t.NetConn()
	}
	c, ok := nc.(*conn)
	return c, ok
}

// wait is since when (in the order connections started waiting) and
// how a connection waits for a request: idle after one, or new.
type wait struct {
	since uint64
	idle  bool
}

// before reports whether w is to be closed before v: idle connections
// first, then the one that has waited longest.
func (w wait) before(v wait) bool {
	if w.idle != v.idle {
		return w.idle
	}
	return w.since < v.since
}

func (l *Limiter) startWaiting(c *conn, idle bool) {
	l.mu.Lock()
	if !c.closed.Load() {
		l.seq++
		l.waiting[c] = wait{l.seq, idle}
	}
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

func (l *Limiter) stopWaiting(c *conn) {
	l.mu.Lock()
	delete(l.waiting, c)
	l.mu.Unlock()
}

// admit takes a slot for a connection just accepted, closing the
// connection that has waited longest for a request if need be, or waiting
// for one to close or start waiting; it fails when done is closed.
func (l *Limiter) admit(done <-chan struct{}) bool {
	for {
		select {
		case l.slots <- struct{}{}:
			return true
		default:
		}
		if l.evictLongestWaiting() {
			continue // its slot is free now
		}
		select {
		case l.slots <- struct{}{}:
			return true
		case <-l.wake:
		case <-done:
			return false
		}
	}
}

// evictLongestWaiting closes, if one waits for a request, the keep-alive
// connection idle longest, or else the new connection that has waited
// longest for its first request.
func (l *Limiter) evictLongestWaiting() bool {
	l.mu.Lock()
	var victim *conn
	var vw wait
	for c, w := range l.waiting {
		if victim == nil || w.before(vw) {
			victim, vw = c, w
		}
	}
	delete(l.waiting, victim)
	l.mu.Unlock()
	if victim == nil {
		return false
	}
	_ = victim.Close()
	n := l.evicted.Add(1)
	if l.OnEvict != nil {
		l.OnEvict(n)
	}
	return true
}

type listener struct {
	net.Listener
	lim       *Limiter
	done      chan struct{}
	closeOnce sync.Once
}

func (ln *listener) Accept() (net.Conn, error) {
	nc, err := ln.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if !ln.lim.admit(ln.done) {
		_ = nc.Close()
		return nil, net.ErrClosed
	}
	c := &conn{Conn: nc, lim: ln.lim}
	ln.lim.startWaiting(c, false)
	return c, nil
}

func (ln *listener) Close() error {
	ln.closeOnce.Do(func() { close(ln.done) })
	return ln.Listener.Close()
}

// conn gives its slot back when it is closed, once.
type conn struct {
	net.Conn
	lim    *Limiter
	closed atomic.Bool
}

func (c *conn) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	c.lim.stopWaiting(c)
	err := c.Conn.Close()
	<-c.lim.slots
	return err
}
