package collector

import (
	"context"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/linkhealth"
)

// Test hooks: what the tests reach in the exporter, kept out of the
// product code.

// onTrace has started (when not nil) learn when each trace starts, on the
// exporter's clock, and done (when not nil) when it ends. Call it before
// Apply: it wraps the scheduler's run.
func (e *Exporter) onTrace(started func(name string, at time.Time), done func(name string)) {
	run := e.sched.run
	e.sched.run = func(ctx context.Context, s *destState, interval time.Duration) {
		if started != nil {
			started(s.cfg.Name, e.clock.Now())
		}
		if done != nil {
			defer done(s.cfg.Name)
		}
		run(ctx, s, interval)
	}
}

// setInventory replaces the source of discovered destinations: inv
// whatever the device (nil: the SA's, as in production).
func (e *Exporter) setInventory(inv Inventory) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.fleet.mu.Lock()
	if inv == nil {
		e.fleet.inventoryOf = saInventoryOf
	} else {
		e.fleet.inventoryOf = func(*ibmad.Engine) Inventory { return inv }
	}
	e.fleet.mu.Unlock()
	e.wakeLocked()
}

// refreshCounts returns the discovery refreshes that succeeded and failed.
func (e *Exporter) refreshCounts() (ok, failed uint64) {
	e.fleet.mu.Lock()
	defer e.fleet.mu.Unlock()
	return e.fleet.refreshes[0], e.fleet.refreshes[1]
}

// destinations returns the states sorted by name.
func (e *Exporter) destinations() []*destState { return e.dests.sorted() }

// healthMADs is what the path health spent so far.
func (e *Exporter) healthMADs() uint64 {
	mads, _ := e.health.read()
	return mads
}

// healthChecker is the current tracer's health checker (nil: health off).
func (e *Exporter) healthChecker() *linkhealth.Checker {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.checker
}
