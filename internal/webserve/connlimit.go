package webserve

import (
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
)

// ConnLimiter admits at most Max connections at once over the listeners it
// wraps. Give its ConnState to the http.Server, so that it knows which
// connections wait for a request (idle between keep-alive requests, or
// new): when all are taken and another connection arrives, it closes the
// keep-alive connection idle longest, or if none is idle the new one that
// has waited longest for its first request; when none waits, the new
// connection waits (in the kernel's backlog, beyond the one being
// admitted) until one closes or starts waiting.
type ConnLimiter struct {
	max     int
	slots   chan struct{}
	wake    chan struct{} // a connection started waiting for a request
	mu      sync.Mutex    // guards seq and waiting
	seq     uint64
	waiting map[*conn]wait
	evicted atomic.Uint64
	// OnEvict, if set before the limiter is used, is called after each
	// connection closed to make room, with how many have been so far.
	OnEvict func(total uint64)
}

// NewConnLimiter returns a limiter of n connections (at least 1).
func NewConnLimiter(n int) *ConnLimiter {
	n = max(n, 1)
	return &ConnLimiter{max: n, slots: make(chan struct{}, n), wake: make(chan struct{}, 1), waiting: map[*conn]wait{}}
}

// Max is the limit.
func (l *ConnLimiter) Max() int { return l.max }

// Open is how many connections are open now.
func (l *ConnLimiter) Open() int { return len(l.slots) }

// Evicted is how many connections were closed to make room.
func (l *ConnLimiter) Evicted() uint64 { return l.evicted.Load() }

// Listen wraps ln: its Accept admits a connection only within the limit.
func (l *ConnLimiter) Listen(ln net.Listener) net.Listener {
	return &listener{Listener: ln, lim: l, done: make(chan struct{})}
}

// ConnState is the http.Server's ConnState hook.
func (l *ConnLimiter) ConnState(nc net.Conn, s http.ConnState) {
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

func (l *ConnLimiter) startWaiting(c *conn, idle bool) {
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

func (l *ConnLimiter) stopWaiting(c *conn) {
	l.mu.Lock()
	delete(l.waiting, c)
	l.mu.Unlock()
}

// admit takes a slot for a connection just accepted, closing the
// connection that has waited longest for a request if need be, or waiting
// for one to close or start waiting; it fails when done is closed.
func (l *ConnLimiter) admit(done <-chan struct{}) bool {
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
func (l *ConnLimiter) evictLongestWaiting() bool {
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
	lim       *ConnLimiter
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
	lim    *ConnLimiter
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

// LimitConns returns the limiter of --web.max-connections (nil for 0: no
// limit), lowered to half the process's open-file limit so that the
// connections leave descriptors for the device, the configuration and
// the scrapes themselves, and the collector of its metrics. It logs the
// connections it closes to make room at the 1st, 2nd, 4th, 8th... one.
func LimitConns(n int, logger log.Logger) (*ConnLimiter, prometheus.Collector) {
	if n <= 0 {
		return nil, nil
	}
	if fds := openFileLimit(); fds > 0 && uint64(n) > fds/2 {
		level.Info(logger).Log("msg", "--web.max-connections lowered to half the open-file limit", "requested", n,
			"open_file_limit", fds, "max_connections", fds/2)
		n = int(fds / 2)
	}
	lim := NewConnLimiter(n)
	lim.OnEvict = func(n uint64) {
		if n&(n-1) == 0 {
			level.Warn(logger).Log("msg", "HTTP connection limit reached: closed the connection waiting longest for a request to admit a new one",
				"max_connections", lim.Max(), "closed_total", n)
		}
	}
	return lim, connCollector(lim)
}

func connCollector(lim *ConnLimiter) prometheus.Collector {
	return collectors{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "ibtracer", Subsystem: "http", Name: "connections",
			Help: "HTTP connections open now."}, func() float64 { return float64(lim.Open()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "ibtracer", Subsystem: "http", Name: "connections_limit",
			Help: "Most HTTP connections open at once (--web.max-connections, at most half the open-file limit)."},
			func() float64 { return float64(lim.Max()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "ibtracer", Subsystem: "http", Name: "connections_evicted_total",
			Help: "HTTP connections closed at the limit, while waiting for a request (idle keep-alive or new), to admit a new one."},
			func() float64 { return float64(lim.Evicted()) }),
	}
}

// collectors is several collectors as one.
type collectors []prometheus.Collector

func (cs collectors) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range cs {
		c.Describe(ch)
	}
}

func (cs collectors) Collect(ch chan<- prometheus.Metric) {
	for _, c := range cs {
		c.Collect(ch)
	}
}

// openFileLimit is the process's soft limit of open files (0: unknown).
func openFileLimit() uint64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0
	}
	return r.Cur
}
