package collector

import (
	"context"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// The seed of the phases: the local port GUID once the device is open
// (SetSeed), unless the configuration's jitter_seed overrides it. The
// scheduler (schedule.go) and the discovery loops (fleet.go) wait for it.

// SetSeed sets the identity the trace phases derive from: the local port
// GUID, once the device is open (the configuration's jitter_seed, when
// set, overrides it). Destination loops do not schedule a trace before a
// seed is known, and follow a new one from their next run on.
func (e *Exporter) SetSeed(seed string) {
	e.mu.Lock()
	e.seed = seed
	e.wakeLocked()
	e.mu.Unlock()
}

// wakeLocked tells whoever waits for a seed (the discovery loops, the
// destinations not begun yet) that something changed: the seed, the
// configuration or the device.
func (e *Exporter) wakeLocked() {
	if e.changed != nil {
		close(e.changed)
	}
	e.changed = make(chan struct{})
	e.sched.wake()
}

// seedLocked returns the seed of the phases ("" while none is known).
func (e *Exporter) seedLocked() string {
	if e.cfg != nil && e.cfg.JitterSeed != "" {
		return e.cfg.JitterSeed
	}
	return e.seed
}

func (e *Exporter) currentSeed() string {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.seedLocked()
}

// startSeed is the seed, learnt from the engine when none is set, and
// the number of destinations (seedSource).
func (e *Exporter) startSeed() (string, int) {
	for {
		e.mu.RLock()
		seed, engine := e.seedLocked(), e.engine
		n := e.dests.count()
		e.mu.RUnlock()
		if seed == "" && e.learnSeed(engine) {
			continue
		}
		return seed, n
	}
}

// seedRetry is how often a loop that has an engine but no seed asks the
// engine for the local port again.
const seedRetry = time.Second

// waitSeed blocks until the phase's seed is known: from SetSeed, from the
// configuration's jitter_seed, or from the engine's local port GUID once a
// device is open (so that the phase never depends on the order in which
// the device owner calls SetDevice and SetSeed). It returns false when ctx
// ends first.
func (e *Exporter) waitSeed(ctx context.Context) (string, bool) {
	for {
		e.mu.RLock()
		seed, changed, engine := e.seedLocked(), e.changed, e.engine
		e.mu.RUnlock()
		if seed != "" {
			return seed, true
		}
		if e.learnSeed(engine) {
			continue
		}
		c, stop := e.clock.Timer(seedRetry)
		select {
		case <-ctx.Done():
			stop()
			return "", false
		case <-changed:
		case <-c:
		}
		stop()
	}
}

// learnSeed takes the local port GUID of engine (nil: none yet) as the
// seed unless one is set; it says whether there is a seed now.
func (e *Exporter) learnSeed(engine *ibmad.Engine) bool {
	if engine == nil {
		return false
	}
	p, err := engine.Port()
	if err != nil || p.PortGUID == 0 {
		return false
	}
	e.mu.Lock()
	if e.seed == "" {
		e.seed = p.PortGUID.String()
	}
	e.mu.Unlock()
	return true
}
