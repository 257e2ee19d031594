package ibmad

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

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

// SetBudget replaces the engine's budget; requests waiting keep the wait
// they were given. A zero Budget removes the limits.
func (e *Engine) SetBudget(b Budget) {
	if b.Rate < 0 || math.IsNaN(b.Rate) {
		b.Rate = 0
	}
	if b.PerTarget < 0 || math.IsNaN(b.PerTarget) {
		b.PerTarget = 0
	}
	e.budget.mu.Lock()
	defer e.budget.mu.Unlock()
	if b.Rate != e.budget.cfg.Rate {
		e.budget.all = nil
	}
	if b.PerTarget != e.budget.cfg.PerTarget {
		e.budget.targets = nil
	}
	e.budget.cfg = b
}

// BudgetStats returns the budget's settings and counters.
func (e *Engine) BudgetStats() BudgetStats {
	e.budget.mu.Lock()
	cfg := e.budget.cfg
	e.budget.mu.Unlock()
	return BudgetStats{Rate: cfg.Rate, PerTarget: cfg.PerTarget, Waits: e.budget.waits.Load(),
		Waited: time.Duration(e.budget.waited.Load()), Expired: e.budget.expired.Load()}
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

// budgetWait blocks until the budget lets one attempt to target go, or
// ctx ends (the token is given back and ctx's error returned).
func (e *Engine) budgetWait(ctx context.Context, target uint64) error {
	wait, clk, cancel := e.budget.reserve(target)
	if wait <= 0 {
		return nil
	}
	e.budget.waits.Add(1)
	c, stop := clk.Timer(wait)
	defer stop()
	start := clk.Now()
	select {
	case <-c:
		e.budget.waited.Add(int64(wait))
		return nil
	case <-ctx.Done():
		cancel()
		e.budget.waited.Add(int64(clk.Now().Sub(start)))
		e.budget.expired.Add(1)
		return ctx.Err()
	case <-e.done:
		cancel()
		return ErrClosed
	}
}
