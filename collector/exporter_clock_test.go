package collector

import (
	"time"

	"github.com/ibtracer/ibtracer_exporter/internal/fakeclock"
)

// fakeClock is a clock whose time moves only when the test advances it.
type fakeClock = fakeclock.Clock

func newFakeClock(start time.Time) *fakeClock { return fakeclock.New(start) }
