package collector

import (
	"sync"
	"time"
)

// stepClock is an ibmad.Clock for fleet simulations of thousands of
// exporters: its timers sit in a set (stopping one is O(1), where
// internal/fakeclock scans a list), and the test moves it one step at a
// time (Add), firing every timer due by then.
type stepClock struct {
	mu     sync.Mutex
	now    time.Time
	timers map[*stepTimer]struct{}
}

type stepTimer struct {
	at time.Time
	ch chan time.Time
	f  func()
}

func newStepClock(start time.Time) *stepClock {
	return &stepClock{now: start, timers: map[*stepTimer]struct{}{}}
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) Timer(d time.Duration) (<-chan time.Time, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &stepTimer{at: c.now.Add(d), ch: make(chan time.Time, 1)}
	if d <= 0 {
		t.ch <- c.now
		return t.ch, func() {}
	}
	c.timers[t] = struct{}{}
	return t.ch, func() { c.stop(t) }
}

func (c *stepClock) AfterFunc(d time.Duration, f func()) func() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d <= 0 {
		go f()
		return func() {}
	}
	t := &stepTimer{at: c.now.Add(d), f: f}
	c.timers[t] = struct{}{}
	return func() { c.stop(t) }
}

func (c *stepClock) stop(t *stepTimer) {
	c.mu.Lock()
	delete(c.timers, t)
	c.mu.Unlock()
}

// Pending is how many timers wait.
func (c *stepClock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// Add moves the time by d and fires every timer due by then; it returns
// how many fired.
func (c *stepClock) Add(d time.Duration) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	n := 0
	for t := range c.timers {
		if t.at.After(c.now) {
			continue
		}
		delete(c.timers, t)
		n++
		if t.f != nil {
			go t.f()
		} else {
			t.ch <- c.now
		}
	}
	return n
}
