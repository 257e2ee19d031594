package collector

import (
	"sync"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// clock is the scheduler's time source, the module's one clock type
// (docs/architecture.md, "One clock"); tests replace it with a fake one
// so that a schedule of many intervals runs without waiting for them.
type clock = ibmad.Clock

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Timer(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTimer(d)
	return t.C, func() { t.Stop() }
}

// AfterFunc runs f on a goroutine of its own once d has passed, unless
// the returned function stops it first; no goroutine waits meanwhile.
func (realClock) AfterFunc(d time.Duration, f func()) func() {
	t := time.AfterFunc(d, f)
	return func() { t.Stop() }
}

// afterFunc runs f once d has passed on c, unless the returned function
// stops it first. A clock with an AfterFunc method (the real one) keeps
// no goroutine while it waits; on any other (the tests' fake clock) one
// goroutine waits for the timer.
func afterFunc(c clock, d time.Duration, f func()) func() {
	if a, ok := c.(interface {
		AfterFunc(time.Duration, func()) func()
	}); ok {
		return a.AfterFunc(d, f)
	}
	ch, stopT := c.Timer(d)
	done := make(chan struct{})
	go func() {
		select {
		case <-ch:
			f()
		case <-done:
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { stopT(); close(done) }) }
}
