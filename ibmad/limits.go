package ibmad

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// The limits on what an engine sends: the windows of MADs in flight (in
// all, and to one target node) and the MAD budget (MADs per second).

// window bounds the MADs in flight: MaxOutstanding in all, MaxPerTarget
// to one target node, so that a fabric full of tracers cannot flood a
// switch's management processor.
type window struct {
	all  chan struct{}   // a slot per MAD in flight
	done <-chan struct{} // the engine's: closed by Close

	mu      sync.Mutex
	targets map[uint64]*targetSlot // the targets with MADs in flight or waiting
	slots   sync.Pool              // idle *targetSlot, their semaphores empty
}

// targetSlot is one target's semaphore and the requests holding or
// waiting for it.
type targetSlot struct {
	sem  chan struct{}
	refs int
}

func newWindow(maxOutstanding, maxPerTarget int, done <-chan struct{}) *window {
	w := &window{all: make(chan struct{}, maxOutstanding), done: done, targets: make(map[uint64]*targetSlot)}
	w.slots.New = func() any { return &targetSlot{sem: make(chan struct{}, maxPerTarget)} }
	return w
}

// targetOf is the node req goes to, for the per-target window and
// budget: req.Target, else its LID, else (a directed route) a hash of
// the route.
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

// acquire waits for a slot in the window and one of target's; it
// returns ctx's error, or ErrClosed once the engine is closed.
func (w *window) acquire(ctx context.Context, target uint64) (*targetSlot, error) {
	select {
	case w.all <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-w.done:
		return nil, ErrClosed
	}
	w.mu.Lock()
	ts := w.targets[target]
	if ts == nil {
		ts = w.slots.Get().(*targetSlot)
		w.targets[target] = ts
	}
	ts.refs++
	w.mu.Unlock()
	select {
	case ts.sem <- struct{}{}:
		return ts, nil
	case <-ctx.Done():
		w.release(target, ts, false)
		return nil, ctx.Err()
	case <-w.done:
		w.release(target, ts, false)
		return nil, ErrClosed
	}
}

// release gives back what acquire took (held: target's slot too).
func (w *window) release(target uint64, ts *targetSlot, held bool) {
	if held {
		<-ts.sem
	}
	w.mu.Lock()
	ts.refs--
	if ts.refs == 0 {
		delete(w.targets, target)
		w.slots.Put(ts)
	}
	w.mu.Unlock()
	<-w.all
}

// Budget is a ceiling on the MADs per second an engine sends: every
// attempt of a request (retries included) takes a token from the engine's
// bucket and from its target node's bucket before it is sent; a request
// without one waits, for at most as long as its context allows. Responses
// the engine sends for its handlers (the hosted agent) take none. See
// docs/architecture.md, "MAD budget".
type Budget struct {
	// Rate is the MADs per second the engine sends in all (0: no limit).
	Rate float64
	// PerTarget is the MADs per second to one target node (Request.Target,
	// by default its LID or directed route; 0: no limit).
	PerTarget float64
	// Clock is the buckets' time source (nil: the wall clock); tests
	// give a fake one.
	Clock Clock
}

// BudgetStats are the budget's settings and counters.
type BudgetStats struct {
	Rate, PerTarget float64
	Waits           uint64        // attempts that waited for a token
	Waited          time.Duration // time spent waiting, summed
	Expired         uint64        // requests whose context ended while they waited
}

// maxBurst caps a bucket's depth (a rate of 10^10 MADs per second and
// more is no limit in practice) so that it fits an int.
const maxBurst = 1 << 30

// burstOf is a bucket's depth: a tenth of a second of its rate, at least
// one MAD, so that the rate holds over any window longer than that.
func burstOf(r float64) int { return int(min(maxBurst, max(1, math.Ceil(r/10)))) }

// newBucket is a token bucket of r MADs per second and burstOf(r) deep.
// Its tokens may go negative: a reservation that takes the count below
// zero waits until the refill brings it back (rate.Limiter.ReserveN on
// the budget's clock).
func newBucket(r float64) *rate.Limiter { return rate.NewLimiter(rate.Limit(r), burstOf(r)) }

// budget is the engine's state of its Budget; the zero value sends
// without limit.
type budget struct {
	mu       sync.Mutex
	cfg      Budget
	all      *rate.Limiter            // nil: not made yet (or reset by SetBudget)
	targets  map[uint64]*rate.Limiter // per target, those that refilled swept
	reserved int                      // per-target reservations, for the sweep

	waits, expired atomic.Uint64
	waited         atomic.Int64
}

// set replaces the budget (Engine.SetBudget): a rate that is negative or
// not a number is no limit.
func (b *budget) set(cfg Budget) {
	if cfg.Rate < 0 || math.IsNaN(cfg.Rate) {
		cfg.Rate = 0
	}
	if cfg.PerTarget < 0 || math.IsNaN(cfg.PerTarget) {
		cfg.PerTarget = 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if cfg.Rate != b.cfg.Rate {
		b.all = nil
	}
	if cfg.PerTarget != b.cfg.PerTarget {
		b.targets = nil
	}
	b.cfg = cfg
}

// stats are the budget's settings and counters (Engine.BudgetStats).
func (b *budget) stats() BudgetStats {
	b.mu.Lock()
	cfg := b.cfg
	b.mu.Unlock()
	return BudgetStats{Rate: cfg.Rate, PerTarget: cfg.PerTarget, Waits: b.waits.Load(),
		Waited: time.Duration(b.waited.Load()), Expired: b.expired.Load()}
}

// pruneEvery is how many reservations pass between sweeps of the
// per-target buckets that have refilled (and so carry no state).
const pruneEvery = 4096

// reserve takes a token for one attempt to target and returns how long
// to wait before sending, the clock to wait on, and the function that
// gives the token back.
func (b *budget) reserve(target uint64) (time.Duration, Clock, func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cfg.Rate == 0 && b.cfg.PerTarget == 0 {
		return 0, nil, nil
	}
	clk := ClockOr(b.cfg.Clock)
	now := clk.Now()
	rs := make([]*rate.Reservation, 0, 2)
	if r := b.cfg.Rate; r > 0 {
		if b.all == nil {
			b.all = newBucket(r)
		}
		rs = append(rs, b.all.ReserveN(now, 1))
	}
	if r := b.cfg.PerTarget; r > 0 {
		rs = append(rs, b.targetBucket(target, now, r).ReserveN(now, 1))
	}
	var wait time.Duration
	for _, x := range rs {
		wait = max(wait, x.DelayFrom(now))
	}
	// cancel gives the token back to the buckets it came from (a bucket
	// SetBudget replaced meanwhile is no longer read).
	cancel := func() {
		at := clk.Now()
		for _, x := range rs {
			x.CancelAt(at)
		}
	}
	return wait, clk, cancel
}

// targetBucket is target's bucket at rate r, made when missing. Every
// pruneEvery calls it first drops the buckets that have refilled by now:
// they carry no state, and the map stays bounded by the targets of the
// last refill time rather than by every target ever asked. The caller
// holds b.mu.
func (b *budget) targetBucket(target uint64, now time.Time, r float64) *rate.Limiter {
	if b.targets == nil {
		b.targets = map[uint64]*rate.Limiter{}
	}
	if b.reserved++; b.reserved%pruneEvery == 0 {
		for k, x := range b.targets {
			if x.TokensAt(now) >= float64(x.Burst()) {
				delete(b.targets, k)
			}
		}
	}
	tb := b.targets[target]
	if tb == nil {
		tb = newBucket(r)
		b.targets[target] = tb
	}
	return tb
}

// wait blocks until the budget lets one attempt to target go, or ctx
// ends (the token is given back and ctx's error returned), or done is
// closed (the engine's; ErrClosed).
func (b *budget) wait(ctx context.Context, target uint64, done <-chan struct{}) error {
	wait, clk, cancel := b.reserve(target)
	if wait <= 0 {
		return nil
	}
	b.waits.Add(1)
	c, stop := clk.Timer(wait)
	defer stop()
	start := clk.Now()
	select {
	case <-c:
		b.waited.Add(int64(wait))
		return nil
	case <-ctx.Done():
		cancel()
		b.waited.Add(int64(clk.Now().Sub(start)))
		b.expired.Add(1)
		return ctx.Err()
	case <-done:
		cancel()
		return ErrClosed
	}
}
