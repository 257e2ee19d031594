package collector

import "time"

// clock is the scheduler's time source; tests replace it with a fake one
// so that a schedule of many intervals runs without waiting for them.
type clock interface {
	Now() time.Time
	// Timer returns a channel that receives once d has passed, and a
	// function that stops it.
	Timer(d time.Duration) (<-chan time.Time, func())
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Timer(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTimer(d)
	return t.C, func() { t.Stop() }
}
