package fakeclock

import (
	"sort"
	"sync"
	"testing"
	"time"
)

// Clock is a fake clock; the zero value starts at the zero time.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*timer
}

// timer is a pending Timer (ch) or AfterFunc (f).
type timer struct {
	at time.Time
	ch chan time.Time
	f  func()
}

// New returns a clock at start.
func New(start time.Time) *Clock { return &Clock{now: start} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Timer returns a channel that receives once d has passed on the clock
// (at once when d <= 0), and a function that stops it.
func (c *Clock) Timer(d time.Duration) (<-chan time.Time, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &timer{at: c.now.Add(d), ch: make(chan time.Time, 1)}
	if d <= 0 {
		t.ch <- c.now
		return t.ch, func() {}
	}
	c.timers = append(c.timers, t)
	return t.ch, func() { c.stop(t) }
}

// AfterFunc runs f on a goroutine of its own once d has passed on the
// clock (at once when d <= 0), unless the returned function stops it
// first.
func (c *Clock) AfterFunc(d time.Duration, f func()) func() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d <= 0 {
		go f()
		return func() {}
	}
	t := &timer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return func() { c.stop(t) }
}

// stop removes t if it has not fired.
func (c *Clock) stop(t *timer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, x := range c.timers {
		if x == t {
			c.timers = append(c.timers[:i], c.timers[i+1:]...)
			return
		}
	}
}

// Pending returns how many timers wait.
func (c *Clock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// Advance moves the time to the earliest pending timer and fires every
// timer due by then; it returns the new time (unchanged with no timer).
func (c *Clock) Advance() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.timers) == 0 {
		return c.now
	}
	sort.SliceStable(c.timers, func(i, j int) bool { return c.timers[i].at.Before(c.timers[j].at) })
	if at := c.timers[0].at; at.After(c.now) {
		c.now = at
	}
	c.fireLocked()
	return c.now
}

// Add moves the time by d and fires every timer due by then.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.fireLocked()
}

func (c *Clock) fireLocked() {
	keep := c.timers[:0]
	for _, t := range c.timers {
		if t.at.After(c.now) {
			keep = append(keep, t)
			continue
		}
		if t.f != nil {
			go t.f()
			continue
		}
		t.ch <- c.now
	}
	c.timers = keep
}

// Next returns when the earliest pending timer fires (zero: none).
func (c *Clock) Next() time.Time {
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

// WaitPending polls (real time, with a 60 s deadline) until n timers
// wait: every goroutine the test expects to park on the clock has parked.
func (c *Clock) WaitPending(t testing.TB, n int, what string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for c.Pending() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d timers pending after 60 s, want %d", what, c.Pending(), n)
		}
		time.Sleep(time.Millisecond)
	}
}
