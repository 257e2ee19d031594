package ibmad

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"
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

// burstOf is a bucket's depth: a tenth of a second of its rate, at least
// one MAD, so that the rate holds over any window longer than that.
func burstOf(rate float64) float64 { return math.Max(1, math.Ceil(rate/10)) }

// bucket is a token bucket whose tokens may go negative: a reservation
// that takes the count below zero waits until the refill brings it back.
type bucket struct {
	tokens float64
	last   time.Time
}

func (b *bucket) reserve(now time.Time, rate float64) time.Duration {
	burst := burstOf(rate)
	if b.last.IsZero() {
		b.tokens, b.last = burst, now
	}
	if dt := now.Sub(b.last).Seconds(); dt > 0 {
		b.tokens = math.Min(burst, b.tokens+dt*rate)
		b.last = now
	}
	b.tokens--
	if b.tokens >= 0 {
		return 0
	}
	return time.Duration(-b.tokens / rate * float64(time.Second))
}

// full reports whether the bucket has refilled by now (it can be dropped).
func (b *bucket) full(now time.Time, rate float64) bool {
	return b.tokens+now.Sub(b.last).Seconds()*rate >= burstOf(rate)
}

// budget is the engine's state of its Budget; the zero value sends
// without limit.
type budget struct {
	mu       sync.Mutex
	cfg      Budget
	all      bucket
	targets  map[uint64]*bucket
	reserved int

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
		e.budget.all = bucket{}
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
// to wait before sending, and the clock to wait on.
func (b *budget) reserve(target uint64) (time.Duration, Clock, func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cfg.Rate == 0 && b.cfg.PerTarget == 0 {
		return 0, nil, nil
	}
	clk := ClockOr(b.cfg.Clock)
	now := clk.Now()
	var wait time.Duration
	var tb *bucket
	if r := b.cfg.Rate; r > 0 {
		wait = b.all.reserve(now, r)
	}
	if r := b.cfg.PerTarget; r > 0 {
		if b.targets == nil {
			b.targets = map[uint64]*bucket{}
		}
		if b.reserved++; b.reserved%pruneEvery == 0 {
			for k, x := range b.targets {
				if x.full(now, r) {
					delete(b.targets, k)
				}
			}
		}
		tb = b.targets[target]
		if tb == nil {
			tb = &bucket{}
			b.targets[target] = tb
		}
		if w := tb.reserve(now, r); w > wait {
			wait = w
		}
	}
	cfg := b.cfg
	// cancel gives the token back to the buckets it came from (if they
	// were not replaced meanwhile by SetBudget).
	cancel := func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if cfg.Rate > 0 && b.cfg.Rate == cfg.Rate {
			b.all.tokens++
		}
		if tb != nil && b.cfg.PerTarget == cfg.PerTarget && b.targets[target] == tb {
			tb.tokens++
		}
	}
	return wait, clk, cancel
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
