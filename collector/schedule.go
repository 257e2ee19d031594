package collector

import (
	"context"
	"time"
)

// The scheduler runs no goroutine per destination (at 10,000 destinations
// their stacks alone took about 100 MB). A destination holds at most one
// armed timer on the exporter's clock: for its next trace, or, before its
// first one, for its next look for the phase's seed. A due destination
// joins one FIFO queue that at most `concurrency` worker goroutines
// drain; a worker ends when the queue is empty. A destination is armed
// again only once its trace has ended, so two traces of one destination
// never overlap and a trace that overruns skips the runs it missed.

// schedState is a destination's place in the schedule, guarded by
// Exporter.sched.mu.
type schedState struct {
	gen     uint64 // bumped by every arm and by stop: an older timer does nothing
	stopT   func() // stops the armed timer (nil: none)
	waiting bool   // armed for a seed retry: a wake begins it again
	queued  bool
	running bool
	stopped bool
	cancel  context.CancelFunc // of the running trace
}

// scheduler is the exporter's queue of due destinations and its workers.
type scheduler struct {
	queue   []*destState
	workers int
	limit   int    // concurrency
	wakes   uint64 // wakeLocked calls: a seed may be known now
	closed  bool   // Stop: no new timer, no new worker
}

// startLocked schedules a new destination: its first run is computed on a
// goroutine of its own (one for every destination a reconcile starts),
// once the exporter's lock is free, as it may ask the device for the
// port GUID.
func (e *Exporter) startLocked(s *destState) {
	e.starting = append(e.starting, s)
}

// kickLocked begins the destinations started since the last call.
func (e *Exporter) kickLocked() {
	if len(e.starting) == 0 {
		return
	}
	list := e.starting
	e.starting = nil
	go e.beginAll(list)
}

func (e *Exporter) beginAll(list []*destState) {
	for _, s := range list {
		e.begin(s)
	}
}

// stopLocked stops a destination: its timer, its running trace (whose
// result is not recorded); s.done closes once no trace of it runs.
func (e *Exporter) stopLocked(s *destState) {
	e.schedMu.Lock()
	defer e.schedMu.Unlock()
	if s.sch.stopped {
		return
	}
	s.sch.stopped = true
	s.sch.gen++
	if s.sch.stopT != nil {
		s.sch.stopT()
		s.sch.stopT = nil
	}
	switch {
	case s.sch.running:
		s.sch.cancel()
	case !s.sch.queued:
		close(s.done)
	}
}

// armLocked arms s's timer: f(s, gen) runs once d has passed, unless s is
// armed again or stopped first. It reports whether it armed one.
func (e *Exporter) armLocked(s *destState, d time.Duration, f func(*destState, uint64)) bool {
	if e.sched.closed || s.sch.stopped {
		return false
	}
	if s.sch.stopT != nil {
		s.sch.stopT()
	}
	s.sch.gen++
	gen := s.sch.gen
	s.sch.waiting = false
	s.sch.stopT = afterFunc(e.clock, d, func() { f(s, gen) })
	return true
}

// begin schedules s's first trace once the phase's seed is known: from
// SetSeed, from the configuration's jitter_seed, or from the engine's
// local port GUID once a device is open (so that the phase never depends
// on the order in which the device owner calls SetDevice and SetSeed).
// Without one, it looks again after seedRetry or at the next wake.
func (e *Exporter) begin(s *destState) {
	for {
		e.schedMu.Lock()
		wakes := e.sched.wakes
		e.schedMu.Unlock()
		e.mu.RLock()
		seed, engine, n := e.seedLocked(), e.engine, len(e.dests)
		e.mu.RUnlock()
		if seed == "" && e.learnSeed(engine) {
			continue
		}
		e.schedMu.Lock()
		if seed == "" {
			if e.sched.wakes != wakes { // woken meanwhile: look again
				e.schedMu.Unlock()
				continue
			}
			if e.armLocked(s, seedRetry, e.seedDue) {
				s.sch.waiting = true
			}
			e.schedMu.Unlock()
			return
		}
		interval := time.Duration(s.cfg.Interval)
		ph := phase(seed, s.cfg.Name, interval)
		// The first traces start soon, but spread with the number of
		// destinations (50 a second), so that a large configuration does
		// not start with a burst that trips the agents' rate limits.
		spread := time.Duration(n) * time.Second / 50
		if spread < 2*time.Second {
			spread = 2 * time.Second
		}
		first := ph % minDuration(interval, spread)
		if s.atPhase { // discovered later: its phase, not a burst with the others
			now := e.clock.Now()
			first = nextRun(now, interval, ph).Sub(now)
		}
		e.armLocked(s, first, e.due)
		e.schedMu.Unlock()
		return
	}
}

// seedDue is the timer of a destination waiting for a seed.
func (e *Exporter) seedDue(s *destState, gen uint64) {
	e.schedMu.Lock()
	ok := s.sch.gen == gen && !s.sch.stopped && !e.sched.closed
	if ok {
		s.sch.stopT = nil
	}
	e.schedMu.Unlock()
	if ok {
		e.begin(s)
	}
}

// wakeSeedWaitersLocked begins again the destinations waiting for a
// seed (e.mu held).
func (e *Exporter) wakeSeedWaitersLocked() {
	e.schedMu.Lock()
	e.sched.wakes++
	var list []*destState
	for _, s := range e.dests {
		if s.sch.waiting && !s.sch.stopped {
			s.sch.waiting = false
			s.sch.gen++
			if s.sch.stopT != nil {
				s.sch.stopT()
				s.sch.stopT = nil
			}
			list = append(list, s)
		}
	}
	e.schedMu.Unlock()
	if len(list) > 0 {
		go e.beginAll(list)
	}
}

// due queues s for a worker.
func (e *Exporter) due(s *destState, gen uint64) {
	e.schedMu.Lock()
	defer e.schedMu.Unlock()
	if s.sch.gen != gen || s.sch.stopped || e.sched.closed {
		return
	}
	s.sch.stopT = nil
	s.sch.queued = true
	e.sched.queue = append(e.sched.queue, s)
	e.spawnLocked()
}

// spawnLocked starts workers while the queue has more destinations than
// workers and the concurrency allows.
func (e *Exporter) spawnLocked() {
	for !e.sched.closed && e.sched.workers < e.sched.limit && e.sched.workers < len(e.sched.queue) {
		e.sched.workers++
		e.wg.Add(1)
		go e.work()
	}
}

// setConcurrencyLocked applies a (reloaded) concurrency: running traces
// finish, and from then on at most c run at once.
func (e *Exporter) setConcurrencyLocked(c int) {
	e.schedMu.Lock()
	e.sched.limit = c
	e.spawnLocked()
	e.schedMu.Unlock()
}

// work traces queued destinations until the queue is empty.
func (e *Exporter) work() {
	defer e.wg.Done()
	for {
		e.schedMu.Lock()
		if e.sched.closed || len(e.sched.queue) == 0 || e.sched.workers > e.sched.limit {
			e.sched.workers--
			e.schedMu.Unlock()
			return
		}
		s := e.sched.queue[0]
		e.sched.queue[0] = nil
		e.sched.queue = e.sched.queue[1:]
		s.sch.queued = false
		if s.sch.stopped {
			close(s.done)
			e.schedMu.Unlock()
			continue
		}
		ctx, cancel := context.WithCancel(e.ctx)
		s.sch.running, s.sch.cancel = true, cancel
		e.schedMu.Unlock()

		interval := time.Duration(s.cfg.Interval)
		e.traceOnce(ctx, s, interval)
		cancel()

		seed := e.currentSeed()
		e.schedMu.Lock()
		s.sch.running, s.sch.cancel = false, nil
		switch {
		case s.sch.stopped:
			close(s.done)
		case seed != "": // a new port or jitter_seed moves the phase
			now := e.clock.Now()
			e.armLocked(s, nextRun(now, interval, phase(seed, s.cfg.Name, interval)).Sub(now), e.due)
		default: // no seed any more (a reload dropped jitter_seed before a device): wait for one
			if e.armLocked(s, seedRetry, e.seedDue) {
				s.sch.waiting = true
			}
		}
		e.schedMu.Unlock()
	}
}

// stopAll stops every destination and the scheduler (Stop).
func (e *Exporter) stopAll() {
	e.mu.Lock()
	for _, s := range e.dests {
		e.stopLocked(s)
	}
	e.schedMu.Lock()
	e.sched.closed = true
	for _, s := range e.sched.queue { // stopped while queued: no worker takes them now
		close(s.done)
		s.sch.queued = false
	}
	e.sched.queue = nil
	e.schedMu.Unlock()
	e.mu.Unlock()
}
