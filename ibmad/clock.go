package ibmad

import "time"

// Clock is the module's one time source (docs/architecture.md, "One
// clock"): the MAD budget, the hosted agent, the tracer's caches and the
// exporter's scheduler all read the time and wait through it, so that a
// test can move time by hand (internal/fakeclock). WallClock is the real
// one.
type Clock interface {
	// Now is the current time.
	Now() time.Time
	// Timer returns a channel that receives once d has passed, and a
	// function that stops it.
	Timer(d time.Duration) (<-chan time.Time, func())
	// AfterFunc runs f on a goroutine of its own once d has passed,
	// unless the returned function stops it first.
	AfterFunc(d time.Duration, f func()) func()
}

// WallClock is the real clock (package time). Its AfterFunc keeps no
// goroutine while it waits.
type WallClock struct{}

// Now returns time.Now().
func (WallClock) Now() time.Time { return time.Now() }

// Timer is a time.Timer's channel and its Stop.
func (WallClock) Timer(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTimer(d)
	return t.C, func() { t.Stop() }
}

// AfterFunc is time.AfterFunc and its Stop.
func (WallClock) AfterFunc(d time.Duration, f func()) func() {
	t := time.AfterFunc(d, f)
	return func() { t.Stop() }
}

// ClockOr returns c, or the wall clock when c is nil: what a Clock field
// left unset in a configuration means.
func ClockOr(c Clock) Clock {
	if c == nil {
		return WallClock{}
	}
	return c
}
