package ibmad

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Engine defaults. The timeout and attempt count match libibmad's
// (1000 ms, 3 attempts; docs/protocol.md); DefaultTimeout is also the
// exporter's and the ibtracer command's default (docs/architecture.md,
// "Options: one meaning per knob").
const (
	DefaultTimeout        = time.Second
	DefaultRetries        = 2
	DefaultMaxOutstanding = 256
	DefaultMaxPerTarget   = 4
)

// Options configure an Engine.
type Options struct {
	// Timeout per attempt when a Request sets none; 0: DefaultTimeout.
	Timeout time.Duration
	// Retries after the first attempt when a Request sets none; 0:
	// DefaultRetries (a negative count is taken as 0). NoRetry: none,
	// whatever Retries says.
	Retries int
	NoRetry bool
	// MaxOutstanding bounds the MADs in flight on this engine.
	MaxOutstanding int
	// MaxPerTarget bounds the MADs in flight to one target node, so that a
	// fabric full of tracers cannot flood a switch's management processor.
	MaxPerTarget int
	// RTTObserver, if set, is called with every response's round-trip time.
	RTTObserver func(class MgmtClass, rtt time.Duration)
	// PortRefresh is how often the engine re-reads the local port's
	// attributes in the background (default 1s).
	PortRefresh time.Duration
}

// Request is one MAD to send and wait for.
type Request struct {
	MAD  MAD
	Addr Address
	// Timeout per attempt and Retries after the first; zero values take the
	// engine's defaults; Retries < 0 means no retry.
	Timeout time.Duration
	Retries int
	// Target identifies the node the request goes to, for the per-target
	// window. Zero derives it from the address (LID) or directed route.
	Target uint64
}

// Response is a received response.
type Response struct {
	MAD      MAD
	Addr     Address
	RTT      time.Duration // of the attempt that was answered
	Attempts int
}

// Handler serves an unsolicited request. It fills resp (MAD and Addr) and
// returns true to send it. Handlers run on the receive goroutine: they must
// not block (no transport call: read the local port with CachedPort). The
// reply is written by the engine's reply workers (engine_senderr.go).
type Handler func(req *Packet, resp *Packet) bool

// Engine multiplexes requests over one Transport. Responses are found by
// the low 32 bits of the TID (the kernel owns the upper 32 bits and ibsim
// rewrites the top 16; docs/architecture.md), drawn at random, and
// complete a request only when they answer exactly what it asked, from
// where it was sent (match.go). Every attempt gets its own TID, so a late
// answer to an earlier attempt still completes the request.
//
// Device loss: a send error of a device that is gone (engine_senderr.go),
// a receive error or a failed port read that wraps ErrDeviceLost marks
// the engine lost for good: Lost is closed, Err
// says why, outstanding and later requests fail with an error wrapping
// ErrDeviceLost. Whoever owns the engine then closes it and opens a new
// transport (the exporter does so with backoff).
//
// Nothing on the receive goroutine waits for the transport's control path:
// the local port is read by a background goroutine every
// Options.PortRefresh and handlers read the cached copy.
type Engine struct {
	t    Transport
	opts Options

	window chan struct{}

	mu       sync.Mutex
	pending  map[uint32]*call
	targets  map[uint64]*targetSlot
	closed   bool
	closeErr error

	handlers   atomic.Pointer[map[handlerKey]Handler]
	hmu        sync.Mutex
	registered map[handlerKey]bool // with the transport; under hmu

	stats  engineStats
	budget budget // MADs per second (engine_budget.go)

	portMu sync.Mutex // serialises reads of the transport's Port
	port   atomic.Pointer[PortAttributes]

	lostOnce sync.Once
	lost     chan struct{}
	lostErr  atomic.Pointer[error]

	calls   sync.Pool
	packets sync.Pool
	slots   sync.Pool // idle *targetSlot, their semaphores empty
	done    chan struct{}
	replies chan *Packet // the agents' replies, sent by replyLoop
}

type handlerKey struct {
	class   MgmtClass
	version uint8
	oui     OUI
	method  Method
}

type targetSlot struct {
	sem  chan struct{}
	refs int
}

const (
	resultNone = iota
	resultResponse
	resultTimeoutReport
	resultError
)

type call struct {
	done    chan struct{}
	timer   *time.Timer
	class   MgmtClass
	want    expected // what an answer must carry (match.go)
	tids    []uint32
	current uint32
	result  int
	err     error
	resp    *Response
	sent    time.Time
	// stream, for a GetTable (engine_rmpp.go), receives every response
	// and timeout report of the call's TIDs instead of resp.
	stream chan *Packet
}

// NewEngine starts an engine on t. It owns t from now on: Close closes it.
func NewEngine(t Transport, opts Options) *Engine {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	switch {
	case opts.NoRetry:
		opts.Retries = 0
	case opts.Retries <= 0:
		opts.Retries = DefaultRetries
	}
	if opts.MaxOutstanding <= 0 {
		opts.MaxOutstanding = DefaultMaxOutstanding
	}
	if opts.MaxPerTarget <= 0 {
		opts.MaxPerTarget = DefaultMaxPerTarget
	}
	if opts.PortRefresh <= 0 {
		opts.PortRefresh = time.Second
	}
	e := &Engine{
		lost:    make(chan struct{}),
		t:       t,
		opts:    opts,
		window:  make(chan struct{}, opts.MaxOutstanding),
		pending: make(map[uint32]*call),
		targets: make(map[uint64]*targetSlot),
		done:    make(chan struct{}),
		replies: make(chan *Packet, replyQueue),
	}
	e.calls.New = func() any {
		t := time.NewTimer(time.Hour)
		t.Stop()
		return &call{done: make(chan struct{}, 1), timer: t, tids: make([]uint32, 0, 4)}
	}
	e.packets.New = func() any { return new(Packet) }
	e.slots.New = func() any { return &targetSlot{sem: make(chan struct{}, opts.MaxPerTarget)} }
	empty := map[handlerKey]Handler{}
	e.handlers.Store(&empty)
	go e.recvLoop()
	go e.portLoop()
	for range replyWorkers {
		go e.replyLoop()
	}
	return e
}

// Transport returns the engine's transport.
func (e *Engine) Transport() Transport { return e.t }

func targetOf(req *Request) uint64 {
	if req.Target != 0 {
		return req.Target
	}
	if req.Addr.LID != PermissiveLID || !req.MAD.IsDirectedRoute() {
		return uint64(req.Addr.LID)
	}
	// FNV-1a over the initial path: one key per directed-route node.
	n := int(req.MAD.DRHopCount())
	if n > MaxDRHops {
		n = MaxDRHops
	}
	h := uint64(14695981039346656037)
	for _, c := range req.MAD[129 : 129+n] {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return h | 1<<63
}

func (e *Engine) acquire(ctx context.Context, target uint64) (*targetSlot, error) {
	select {
	case e.window <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-e.done:
		return nil, ErrClosed
	}
	e.mu.Lock()
	ts := e.targets[target]
	if ts == nil {
		ts = e.slots.Get().(*targetSlot)
		e.targets[target] = ts
	}
	ts.refs++
	e.mu.Unlock()
	select {
	case ts.sem <- struct{}{}:
		return ts, nil
	case <-ctx.Done():
		e.release(target, ts, false)
		return nil, ctx.Err()
	case <-e.done:
		e.release(target, ts, false)
		return nil, ErrClosed
	}
}

func (e *Engine) release(target uint64, ts *targetSlot, held bool) {
	if held {
		<-ts.sem
	}
	e.mu.Lock()
	ts.refs--
	if ts.refs == 0 {
		delete(e.targets, target)
		e.slots.Put(ts)
	}
	e.mu.Unlock()
	<-e.window
}

// Do sends req and waits for its response, retrying on timeout. It returns
// an error wrapping ErrTimeout after the last attempt, ErrClosed after
// Close, ctx.Err() on cancellation, an error wrapping ErrRequestRefused
// when the transport refuses this request (it alone fails), or one
// wrapping ErrDeviceLost when the device is gone. A
// response with a non-zero status is returned as a response, not an error.
func (e *Engine) Do(ctx context.Context, req *Request, resp *Response) error {
	timeout, retries := e.attempts(req)
	class := req.MAD.MgmtClass()
	cs := e.stats.class(class)
	if err := e.Err(); err != nil {
		return err
	}

	target := targetOf(req)
	ts, err := e.acquire(ctx, target)
	if err != nil {
		return err
	}
	defer e.release(target, ts, true)
	e.stats.outstanding.Add(1)
	defer e.stats.outstanding.Add(-1)

	c := e.calls.Get().(*call)
	c.class, c.resp, c.want = class, resp, expect(&req.MAD, &req.Addr)
	defer e.putCall(c)

	pkt := e.packets.Get().(*Packet)
	defer e.packets.Put(pkt)

	var lastErr error
	for attempt := 0; attempt <= retries; attempt++ {
		if attempt > 0 {
			cs.retries.Add(1)
		}
		if err := e.budgetWait(ctx, target); err != nil {
			return err
		}
		cs.requests.Add(1)
		tid, err := e.mapAttempt(c)
		if err != nil {
			return err
		}

		*pkt = Packet{Addr: req.Addr, MAD: req.MAD, TimeoutMS: uint32(timeout / time.Millisecond)}
		if pkt.TimeoutMS == 0 {
			pkt.TimeoutMS = 1
		}
		pkt.MAD.SetTID(uint64(tid))
		c.sent = time.Now()
		if err := e.t.Send(pkt); err != nil {
			cs.sendErrors.Add(1)
			if err := e.sendFailed(ctx, req, class, timeout, err); err != nil {
				return err
			}
			lastErr = fmt.Errorf("send: %w", err)
			continue
		} else {
			c.timer.Reset(timeout)
			select {
			case <-c.done:
				c.timer.Stop()
			case <-c.timer.C:
				e.mu.Lock()
				if c.result == resultNone {
					// Keep tid mapped: a late response still completes the call.
					c.current = 0
					e.mu.Unlock()
					cs.timeouts.Add(1)
					lastErr = fmt.Errorf("%w after %v", ErrTimeout, timeout)
					continue
				}
				e.mu.Unlock()
				<-c.done
			case <-ctx.Done():
				c.timer.Stop()
				return ctx.Err()
			}
		}
		// The token is consumed; c.result was set under e.mu before it was sent.
		switch c.result {
		case resultResponse:
			resp.Attempts = attempt + 1
			resp.RTT = time.Since(c.sent)
			if e.opts.RTTObserver != nil {
				e.opts.RTTObserver(class, resp.RTT)
			}
			return nil
		case resultTimeoutReport:
			cs.timeouts.Add(1)
			lastErr = fmt.Errorf("%w: transport reported no response", ErrTimeout)
			e.mu.Lock()
			c.result, c.current = resultNone, 0
			e.mu.Unlock()
		default:
			return c.err
		}
	}
	if lastErr == nil {
		lastErr = ErrTimeout
	}
	return fmt.Errorf("%s %s to %s: %d attempts: %w", class, req.MAD.AttrID().name(class), req.Addr, retries+1, lastErr)
}

// putCall unmaps c's TIDs and returns it to the pool. Tokens are sent only
// under e.mu to calls that are still mapped, so once c is unmapped a
// non-blocking drain leaves its channel empty for good.
func (e *Engine) putCall(c *call) {
	e.mu.Lock()
	for _, t := range c.tids {
		if e.pending[t] == c {
			delete(e.pending, t)
		}
	}
	select {
	case <-c.done:
	default:
	}
	e.mu.Unlock()
	c.timer.Stop()
	c.tids = c.tids[:0]
	c.current, c.result, c.err, c.resp = 0, resultNone, nil, nil
	e.calls.Put(c)
}

func (e *Engine) failAll(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	seen := map[*call]bool{}
	for t, c := range e.pending {
		delete(e.pending, t)
		if seen[c] {
			continue
		}
		seen[c] = true
		if c.result == resultNone {
			c.result, c.err = resultError, err
			c.done <- struct{}{}
		}
	}
}

// Close stops the engine, closes the transport and fails every waiter.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return e.closeErr
	}
	e.closed = true
	close(e.done)
	e.mu.Unlock()
	e.closeErr = e.t.Close()
	e.failAll(ErrClosed)
	return e.closeErr
}
