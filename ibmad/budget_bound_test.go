package ibmad

import (
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/internal/fakeclock"
)

// The per-target buckets stay bounded: every pruneEvery reservations the
// buckets that have refilled (which carry no state) are dropped, while a
// bucket still short of tokens is kept with its debt.
func TestBudgetTargetsStayBounded(t *testing.T) {
	clk := fakeclock.New(time.Unix(1800000000, 0))
	b := &budget{cfg: Budget{PerTarget: 100, Clock: clk}} // burst 10, a token every 10 ms
	const hot = 1 << 40
	calls := 0
	reserve := func(target uint64) time.Duration {
		w, _, _ := b.reserve(target)
		if calls++; calls%pruneEvery == 0 {
			// This call swept: only the hot bucket and this one are left.
			if _, ok := b.targets[hot]; !ok {
				t.Fatalf("call %d: the sweep dropped a bucket that had not refilled", calls)
			}
			if n := len(b.targets); n > 2 {
				t.Fatalf("call %d: %d buckets after the sweep, want the hot one and the new one", calls, n)
			}
		}
		if n := len(b.targets); n > pruneEvery {
			t.Fatalf("call %d: %d per-target buckets, want at most %d", calls, n, pruneEvery)
		}
		return w
	}
	for i := 1; calls < 3*pruneEvery; i++ {
		if calls%pruneEvery == pruneEvery-15 {
			// The hot target's burst and one more: it owes a token
			// through the next sweep, 5 steps later (it refills in 110 ms).
			for range 10 {
				reserve(hot)
			}
			if w := reserve(hot); w <= 0 {
				t.Fatalf("call %d: the hot target's bucket is not empty after its burst", calls)
			}
		}
		if w := reserve(uint64(i)); w != 0 {
			t.Fatalf("call %d: a new target waited %v", calls, w)
		}
		clk.Add(20 * time.Millisecond) // every other bucket has refilled by the next step
	}
}
