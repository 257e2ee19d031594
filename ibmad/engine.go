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
	// Retries after the first attempt when a Request sets none; 0 (or
	// less): DefaultRetries. NoRetry: none, whatever Retries says.
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
	// attributes in the background, the health probe of an idle device
	// (default 10s: an idle exporter wakes for it, docs/architecture.md,
	// "Quiet when idle"). Port never returns a copy older than
	// PortFresh, reading the transport itself when the copy is older.
	PortRefresh time.Duration
	// Log, if set, is told what the engine drops that a counter alone
	// would not explain: a handler's replies dropped from a full reply
	// queue, once per requester until its replies drain.
	Log func(msg string, keyvals ...any)
}

// Request is one MAD to send and wait for.
type Request struct {
	MAD  MAD
	Addr Address
	// Timeout per attempt and Retries after the first; zero values (and
	// negative ones) take the engine's. NoRetry sends the request once,
	// whatever Retries and the engine say.
	Timeout time.Duration
	Retries int
	NoRetry bool
	// Target identifies the node the request goes to, for the per-target
	// window. Zero derives it from the address (LID) or directed route.
	Target uint64
	// DestLMC is the LMC of the port a LID-routed request goes to, as
	// the SA or a walk read it (its PortInfo): an answer from any of
	// that port's 2^DestLMC LIDs is the port's, since a responder may
	// answer from its base LID whichever of its LIDs was asked. 0, also
	// when it is not known, takes an answer only from the LID asked
	// (docs/protocol.md, "Which answer is ours").
	DestLMC uint8
}

// Response is a received response.
type Response struct {
	MAD      MAD
	Addr     Address
	RTT      time.Duration // of the attempt that was answered
	Attempts int
}

// Engine multiplexes requests over one Transport. Responses are found by
// the low 32 bits of the TID (the kernel owns the upper 32 bits and ibsim
// rewrites the top 16; docs/architecture.md), drawn at random, and
// complete a request only when they answer exactly what it asked, from
// where it was sent (docs/protocol.md, "Which answer is ours"). Every
// attempt gets its own TID, so a late answer to an earlier attempt still
// completes the request.
//
// Device loss: a send error of a device that is gone (docs/protocol.md,
// "Send errors"), a receive error or a failed port read that wraps
// ErrDeviceLost marks the engine lost for good: Lost is closed, Err says
// why, outstanding and later requests fail with an error wrapping
// ErrDeviceLost. Whoever owns the engine then closes it and opens a new
// transport (the exporter does so with backoff).
//
// Nothing on the receive goroutine waits for the transport's control path:
// the local port is read by a background goroutine every
// Options.PortRefresh and handlers read the cached copy.
type Engine struct {
	t    Transport
	opts Options
	done chan struct{} // closed by Close

	pending  pendingTable // the requests waiting for an answer
	window   *window      // the MADs in flight, in all and per target
	budget   budget       // MADs per second
	handlers handlerTable // the unsolicited requests served
	stats    engineStats
	closeErr error

	portMu sync.Mutex // serialises reads of the transport's Port
	port   atomic.Pointer[portCopy]

	lostOnce sync.Once
	lost     chan struct{}
	lostErr  atomic.Pointer[error]

	packets sync.Pool
	replies replyQueue // the handlers' replies, sent by replyLoop
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
		opts.PortRefresh = DefaultPortRefresh
	}
	e := &Engine{
		lost: make(chan struct{}),
		t:    t,
		opts: opts,
		done: make(chan struct{}),
	}
	e.pending.init()
	e.replies.init()
	e.window = newWindow(opts.MaxOutstanding, opts.MaxPerTarget, e.done)
	e.handlers.init()
	e.packets.New = func() any { return new(Packet) }
	go e.recvLoop()
	go e.portLoop()
	for range replyWorkers {
		go e.replyLoop()
	}
	return e
}

// Transport returns the engine's transport.
func (e *Engine) Transport() Transport { return e.t }

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
	ts, err := e.window.acquire(ctx, target)
	if err != nil {
		return err
	}
	defer e.window.release(target, ts, true)
	e.stats.outstanding.Add(1)
	defer e.stats.outstanding.Add(-1)

	c := newCall(class, expect(&req.MAD, &req.Addr, req.DestLMC), resp)
	defer e.pending.unmap(c)

	pkt := e.packets.Get().(*Packet)
	defer e.packets.Put(pkt)

	var lastErr error
	for attempt := 0; attempt <= retries; attempt++ {
		if attempt > 0 {
			cs.retries.Add(1)
		}
		if err := e.budget.wait(ctx, target, e.done); err != nil {
			return err
		}
		cs.requests.Add(1)
		tid, err := e.pending.mapAttempt(c)
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
			timer := time.NewTimer(timeout)
			select {
			case <-c.done:
				timer.Stop()
			case <-timer.C:
				if e.pending.expire(c) {
					cs.timeouts.Add(1)
					lastErr = fmt.Errorf("%w after %v", ErrTimeout, timeout)
					continue
				}
				<-c.done
			case <-ctx.Done():
				timer.Stop()
				return ctx.Err()
			}
		}
		// The token is consumed; c.result was set under the pending
		// table's lock before it was sent.
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
			e.pending.rearm(c)
		default:
			return c.err
		}
	}
	if lastErr == nil {
		lastErr = ErrTimeout
	}
	return fmt.Errorf("%s %s to %s: %d attempts: %w", class, req.MAD.AttrID().name(class), req.Addr, retries+1, lastErr)
}

// Close stops the engine, closes the transport and fails every waiter.
func (e *Engine) Close() error {
	if !e.pending.shut() {
		return e.closeErr
	}
	close(e.done)
	e.closeErr = e.t.Close()
	e.pending.failAll(ErrClosed)
	return e.closeErr
}

// attempts is req's timeout per attempt and retries after the first, the
// engine's defaults where req leaves them 0; none with req.NoRetry.
func (e *Engine) attempts(req *Request) (time.Duration, int) {
	timeout, retries := req.Timeout, req.Retries
	if timeout <= 0 {
		timeout = e.opts.Timeout
	}
	switch {
	case req.NoRetry:
		retries = 0
	case retries <= 0:
		retries = e.opts.Retries
	}
	return timeout, retries
}

// Stats returns a snapshot of the counters.
func (e *Engine) Stats() Stats { return e.stats.snapshot() }

// SetBudget replaces the engine's budget; requests waiting keep the wait
// they were given. A zero Budget removes the limits.
func (e *Engine) SetBudget(b Budget) { e.budget.set(b) }

// BudgetStats returns the budget's settings and counters.
func (e *Engine) BudgetStats() BudgetStats { return e.budget.stats() }
