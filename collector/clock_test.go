package collector

import (
	"sort"
	"sync"
	"testing"
	"time"
)

// fakeClock is a clock whose time moves only when the test advances it.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock(start time.Time) *fakeClock { return &fakeClock{now: start} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Timer(d time.Duration) (<-chan time.Time, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{at: c.now.Add(d), ch: make(chan time.Time, 1)}
	if d <= 0 {
		t.ch <- c.now
		return t.ch, func() {}
	}
	c.timers = append(c.timers, t)
	return t.ch, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, x := range c.timers {
			if x == t {
				c.timers = append(c.timers[:i], c.timers[i+1:]...)
				return
			}
		}
	}
}

// pending returns how many timers wait.
func (c *fakeClock) pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// advance moves the time to the earliest pending timer and fires every
// timer due by then; it returns the new time.
func (c *fakeClock) advance() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.timers) == 0 {
		return c.now
	}
	sort.SliceStable(c.timers, func(i, j int) bool { return c.timers[i].at.Before(c.timers[j].at) })
	if at := c.timers[0].at; at.After(c.now) {
		c.now = at
	}
	keep := c.timers[:0]
	for _, t := range c.timers {
		if t.at.After(c.now) {
			keep = append(keep, t)
			continue
		}
		t.ch <- c.now
	}
	c.timers = keep
	return c.now
}

// waitPending polls (real time, with a deadline) until n timers wait:
// every goroutine that the test expects to park on the clock has parked.
func (c *fakeClock) waitPending(t *testing.T, n int, what string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for c.pending() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d timers pending after 60 s, want %d", what, c.pending(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// next returns when the earliest pending timer fires.
func (c *fakeClock) next() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n time.Time
	for _, t := range c.timers {
		if n.IsZero() || t.at.Before(n) {
			n = t.at
		}
	}
	return n
}
