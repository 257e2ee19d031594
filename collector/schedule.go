package collector

import (
	"context"
	"hash/fnv"
	"sync"
	"time"

	"github.com/ibtracer/ibtracer_exporter/collector/fleet"
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
// scheduler.mu.
type schedState struct {
	gen     uint64 // bumped by every arm and by stop: an older timer does nothing
	stopT   func() // stops the armed timer (nil: none)
	waiting bool   // armed for a seed retry (in scheduler.waiting): a wake begins it again
	queued  bool
	running bool
	stopped bool
	cancel  context.CancelFunc // of the running trace
}

// seedSource is what the scheduler asks the exporter for: the seed of the
// phases (runtime.go).
type seedSource interface {
	// CurrentSeed is the seed ("" while none is known).
	CurrentSeed() string
	// startSeed is the seed, learnt from the device's port GUID when
	// none is set and a device is open, and the number of destinations
	// (the first traces are spread with it).
	startSeed() (seed string, destinations int)
}

// scheduler is the queue of due destinations and its workers.
type scheduler struct {
	ctx   context.Context // the exporter's: cancelled by Stop
	clock *clock          // the exporter's (Exporter.clock): one clock for the whole exporter
	seeds seedSource
	// run traces a destination once (Exporter.traceOnce; tests wrap it,
	// export_test.go).
	run func(ctx context.Context, s *destState, interval time.Duration)
	wg  sync.WaitGroup // the workers (Stop waits for them)

	mu      sync.Mutex // guards the fields below and every destState's sch
	queue   []*destState
	waiting map[*destState]struct{} // destinations armed for a seed retry
	workers int
	limit   int       // concurrency
	wakes   uint64    // wake calls: a seed may be known now
	closed  bool      // close: no new timer, no new worker
	began   time.Time // the exporter's first runtime (markStart): the start window's origin
}

func newScheduler(ctx context.Context, c *clock, seeds seedSource) *scheduler {
	return &scheduler{ctx: ctx, clock: c, seeds: seeds, waiting: map[*destState]struct{}{}}
}

// traceStartSpread is the window over which the first traces of the
// destinations discovered within it of an exporter's start are spread,
// each by its seed and name (startOffset) after it is discovered: a
// fleet that starts at once (a reboot of every node) walks its cold
// paths, 8 SMPs at a spine where a warm trace sends under one, over the
// discovery's fleet.StartSpread and this window, not over the first
// interval after discovery (docs/architecture.md, "Load on one switch").
// An offset relative to discovery, not to the start, keeps the first
// traces from piling up where discovery ends.
// The window is at most startIntervals intervals, so that a short
// interval (or a fast rotation) does not wait minutes.
const (
	traceStartSpread = 8 * time.Minute
	startIntervals   = 8
)

// markStart sets the start window's origin, once: the exporter's first
// runtime (Install).
func (q *scheduler) markStart() {
	q.mu.Lock()
	if q.began.IsZero() {
		q.began = (*q.clock).Now()
	}
	q.mu.Unlock()
}

// start schedules new destinations: their first runs are computed on a
// goroutine of their own, as it may ask the device for the port GUID.
func (q *scheduler) start(list []*destState) {
	if len(list) > 0 {
		go q.beginAll(list)
	}
}

func (q *scheduler) beginAll(list []*destState) {
	for _, s := range list {
		q.begin(s)
	}
}

// stop stops a destination: its timer, its running trace (whose result
// is not recorded); s.done closes once no trace of it runs.
func (q *scheduler) stop(s *destState) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if s.sch.stopped {
		return
	}
	s.sch.stopped = true
	s.sch.gen++
	q.setWaitingLocked(s, false)
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

// setWaitingLocked marks s as waiting for a seed, or not.
func (q *scheduler) setWaitingLocked(s *destState, w bool) {
	s.sch.waiting = w
	if w {
		q.waiting[s] = struct{}{}
	} else {
		delete(q.waiting, s)
	}
}

// armLocked arms s's timer: f(s, gen) runs once d has passed, unless s is
// armed again or stopped first. It reports whether it armed one.
func (q *scheduler) armLocked(s *destState, d time.Duration, f func(*destState, uint64)) bool {
	if q.closed || s.sch.stopped {
		return false
	}
	if s.sch.stopT != nil {
		s.sch.stopT()
	}
	s.sch.gen++
	gen := s.sch.gen
	q.setWaitingLocked(s, false)
	s.sch.stopT = (*q.clock).AfterFunc(d, func() { f(s, gen) })
	return true
}

// armSeedLocked arms s to look for the phase's seed again after seedRetry
// or at the next wake.
func (q *scheduler) armSeedLocked(s *destState) {
	if q.armLocked(s, seedRetry, q.seedDue) {
		q.setWaitingLocked(s, true)
	}
}

// begin schedules s's first trace once the phase's seed is known: from
// SetSeed, from the configuration's jitter_seed, or from the engine's
// local port GUID once a device is open (so that the phase never depends
// on the order in which the device owner calls Install and SetSeed).
// Without one, it looks again after seedRetry or at the next wake.
func (q *scheduler) begin(s *destState) {
	for {
		q.mu.Lock()
		wakes := q.wakes
		q.mu.Unlock()
		seed, n := q.seeds.startSeed()
		q.mu.Lock()
		if seed == "" {
			if q.wakes != wakes { // woken meanwhile: look again
				q.mu.Unlock()
				continue
			}
			q.armSeedLocked(s)
			q.mu.Unlock()
			return
		}
		q.armLocked(s, q.firstRun(s, seed, n), q.due)
		q.mu.Unlock()
		return
	}
}

// firstRun is how long after now s's first trace runs, with n
// destinations configured.
func (q *scheduler) firstRun(s *destState, seed string, n int) time.Duration {
	interval := time.Duration(s.cfg.Interval)
	ph := phase(seed, s.cfg.Name, interval)
	if s.atPhase { // discovered: its phase, not a burst with the others
		now := (*q.clock).Now()
		from := now
		window := min(traceStartSpread, startIntervals*interval)
		if window > 0 && !q.began.IsZero() && now.Before(q.began.Add(window)) { // discovered at the start: its part of the window later
			from = now.Add(startOffset(seed, s.cfg.Name, window))
		}
		return nextRun(from, interval, ph).Sub(now)
	}
	// The first traces start soon, but spread with the number of
	// destinations (50 a second), so that a large configuration does
	// not start with a burst that trips the agents' rate limits.
	spread := time.Duration(n) * time.Second / 50
	if spread < 2*time.Second {
		spread = 2 * time.Second
	}
	return ph % minDuration(interval, spread)
}

// seedDue is the timer of a destination waiting for a seed.
func (q *scheduler) seedDue(s *destState, gen uint64) {
	q.mu.Lock()
	ok := s.sch.gen == gen && !s.sch.stopped && !q.closed
	if ok {
		s.sch.stopT = nil
	}
	q.mu.Unlock()
	if ok {
		q.begin(s)
	}
}

// wake begins again the destinations waiting for a seed: one may be
// known now.
func (q *scheduler) wake() {
	q.mu.Lock()
	q.wakes++
	var list []*destState
	for s := range q.waiting {
		if !s.sch.stopped {
			s.sch.gen++
			if s.sch.stopT != nil {
				s.sch.stopT()
				s.sch.stopT = nil
			}
			list = append(list, s)
		}
		q.setWaitingLocked(s, false)
	}
	q.mu.Unlock()
	q.start(list)
}

// due queues s for a worker.
func (q *scheduler) due(s *destState, gen uint64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if s.sch.gen != gen || s.sch.stopped || q.closed {
		return
	}
	s.sch.stopT = nil
	s.sch.queued = true
	q.queue = append(q.queue, s)
	q.spawnLocked()
}

// spawnLocked starts workers while the queue has more destinations than
// workers and the concurrency allows.
func (q *scheduler) spawnLocked() {
	for !q.closed && q.workers < q.limit && q.workers < len(q.queue) {
		q.workers++
		q.wg.Add(1)
		go q.work()
	}
}

// setConcurrency applies a (reloaded) concurrency: running traces
// finish, and from then on at most c run at once.
func (q *scheduler) setConcurrency(c int) {
	q.mu.Lock()
	q.limit = c
	q.spawnLocked()
	q.mu.Unlock()
}

// work traces queued destinations until the queue is empty.
func (q *scheduler) work() {
	defer q.wg.Done()
	for {
		s, ctx, cancel := q.next()
		if s == nil {
			return
		}
		interval := time.Duration(s.cfg.Interval)
		q.run(ctx, s, interval)
		cancel()
		q.rearm(s, interval)
	}
}

// next takes the next destination to trace off the queue, marked running
// with its trace's context (nil: the worker ends).
func (q *scheduler) next() (*destState, context.Context, context.CancelFunc) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		if q.closed || len(q.queue) == 0 || q.workers > q.limit {
			q.workers--
			return nil, nil, nil
		}
		s := q.queue[0]
		q.queue[0] = nil
		q.queue = q.queue[1:]
		s.sch.queued = false
		if s.sch.stopped {
			close(s.done)
			continue
		}
		ctx, cancel := context.WithCancel(q.ctx)
		s.sch.running, s.sch.cancel = true, cancel
		return s, ctx, cancel
	}
}

// rearm arms s's next trace once one has ended (or ends it, if stopped
// meanwhile).
func (q *scheduler) rearm(s *destState, interval time.Duration) {
	seed := q.seeds.CurrentSeed()
	q.mu.Lock()
	defer q.mu.Unlock()
	s.sch.running, s.sch.cancel = false, nil
	switch {
	case s.sch.stopped:
		close(s.done)
	case seed != "": // a new port or jitter_seed moves the phase
		now := (*q.clock).Now()
		q.armLocked(s, nextRun(now, interval, phase(seed, s.cfg.Name, interval)).Sub(now), q.due)
	default: // no seed any more (a reload dropped jitter_seed before a device): wait for one
		q.armSeedLocked(s)
	}
}

// close stops the scheduler (Stop): no new timer, no new worker; the
// destinations still queued are done.
func (q *scheduler) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	for _, s := range q.queue { // stopped while queued: no worker takes them now
		close(s.done)
		s.sch.queued = false
	}
	q.queue = nil
}

// phase is the destination's deterministic offset within its interval:
// a hash of the exporter's identity (its port GUID) and the destination,
// so that a fabric of exporters spreads its traces over the interval.
func phase(seed, name string, interval time.Duration) time.Duration {
	h := fnv.New64a()
	_, _ = h.Write([]byte(seed))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(name))
	if interval <= 0 {
		return 0
	}
	return time.Duration(h.Sum64() % uint64(interval))
}

// startOffset is how far into the start window the first trace of
// destination name, discovered at the start of the exporter whose seed
// is seed, waits: a hash apart from the phase's, so that a destination's
// offset and phase do not go together.
func startOffset(seed, name string, window time.Duration) time.Duration {
	return time.Duration(fleet.Hash64("start", seed, name) % uint64(window))
}

// nextRun returns the first time after now that sits at phase within the
// interval grid anchored at the Unix epoch.
func nextRun(now time.Time, interval, ph time.Duration) time.Time {
	base := now.Truncate(interval).Add(ph)
	for !base.After(now) {
		base = base.Add(interval)
	}
	return base
}

func minDuration(a, b time.Duration) time.Duration {
	if a < b {
		return a
	}
	return b
}
