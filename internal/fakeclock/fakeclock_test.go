package fakeclock_test

import (
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/internal/fakeclock"
)

// The fake clock is a clock of the module's one kind (ibmad.Clock).
var _ ibmad.Clock = (*fakeclock.Clock)(nil)

// AfterFunc runs f once the clock passes its time, not before, on a
// goroutine of its own, and never after it was stopped.
func TestAfterFunc(t *testing.T) {
	c := fakeclock.New(time.Unix(1800000000, 0))
	ran := make(chan time.Time, 2)
	c.AfterFunc(2*time.Second, func() { ran <- c.Now() })
	stop := c.AfterFunc(time.Second, func() { ran <- time.Time{} })
	if n := c.Pending(); n != 2 {
		t.Fatalf("%d timers pending, want 2", n)
	}
	stop()
	if n := c.Pending(); n != 1 {
		t.Fatalf("%d timers pending after a stop, want 1", n)
	}
	c.Add(time.Second)
	select {
	case at := <-ran:
		t.Fatalf("a function ran at %v: before its time, or after its stop", at)
	default:
	}
	if at := c.Advance(); !at.Equal(time.Unix(1800000002, 0)) {
		t.Fatalf("advanced to %v, want the 2 s timer's time", at)
	}
	select {
	case at := <-ran:
		if !at.Equal(time.Unix(1800000002, 0)) {
			t.Fatalf("ran at %v", at)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the function never ran")
	}
	if n := c.Pending(); n != 0 {
		t.Fatalf("%d timers pending after firing, want 0", n)
	}
}

// AfterFunc with d <= 0 runs f at once (as time.AfterFunc does).
func TestAfterFuncNow(t *testing.T) {
	c := fakeclock.New(time.Unix(1800000000, 0))
	ran := make(chan struct{})
	c.AfterFunc(0, func() { close(ran) })
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("AfterFunc(0) never ran")
	}
}
