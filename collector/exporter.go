package collector

import (
	"context"
	"sync"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/ibtracer/ibtracer_exporter/agent"
	"github.com/ibtracer/ibtracer_exporter/collector/config"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/linkhealth"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

const namespace = "ibtracer"

// Exporter owns the configuration, the device and the tracer, and wires
// the parts that do the work: the scheduler (schedule.go), the discover:
// selectors (fleet.go), the destinations and what their traces found
// (destset.go, destination.go), and their readers: the scrape
// (metrics.go), the pages (pages.go) and the logs (logstate.go).
//
// Locks (doc.go): Exporter.mu first, then one of destSet.mu, fleet.mu or
// scheduler.mu; a destination's own (destState.mu, opsState.mu) last. A
// method named …Locked runs with its receiver's own mutex held.
type Exporter struct {
	logger log.Logger
	clock  clock // the exporter's one clock: the scheduler's, the loops', the tracer's (tests set a fake one)

	ctx    context.Context // cancelled by Stop
	cancel context.CancelFunc

	sched  *scheduler // when each destination is traced
	fleet  *fleet     // the destinations the discover: selectors find
	dests  *destSet   // the destinations traced, and what they found
	modes  modeStats  // traces by discovery mode (discoverymode.go)
	health healthTotals
	skips  skipCounts // traces not run (tracing.go)

	capped evidenceCap // link evidence left out of a scrape (evidence.go)
	ctrs   ctrLog      // what the logs last said of each link's counters (health_log.go)

	mu        sync.RWMutex // guards the fields below
	cfg       *config.Config
	seed      string        // seed.go
	changed   chan struct{} // closed when the seed, the configuration or the device changes
	engine    *ibmad.Engine
	agent     *agent.Agent
	deviceErr error
	tracer    *trace.Tracer
	checker   *linkhealth.Checker // the tracer's path health (health.go); nil: health off
}

// New returns an Exporter with no device yet; see SetDevice.
func New(logger log.Logger, seed string) *Exporter {
	ctx, cancel := context.WithCancel(context.Background())
	e := &Exporter{logger: logger, seed: seed, ctx: ctx, cancel: cancel, clock: ibmad.WallClock{},
		changed: make(chan struct{}), dests: newDestSet()}
	e.sched = newScheduler(ctx, &e.clock, e)
	e.sched.run = e.traceOnce
	e.fleet = newFleet(ctx, logger, &e.clock, e)
	return e
}

// SetDevice gives the exporter its engine (and hosted agent, or nil);
// err says why there is none yet. SetDevice(nil, nil, err) reports a lost
// device: device_up drops to 0 and traces are skipped, not charged to the
// destinations, until the next SetDevice with an engine.
func (e *Exporter) SetDevice(engine *ibmad.Engine, a *agent.Agent, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.engine, e.agent, e.deviceErr = engine, a, err
	e.tracer, e.checker = nil, nil
	if engine != nil && e.cfg != nil {
		e.tracer = e.newTracer(e.cfg)
		e.applyBudgetLocked()
	}
	e.wakeLocked()
}

// device returns the engine (nil: none open) and the channel closed at
// the next change (fleetHost).
func (e *Exporter) device() (*ibmad.Engine, <-chan struct{}) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.engine, e.changed
}

func (e *Exporter) newTracer(c *config.Config) *trace.Tracer {
	o := c.TraceOptions()
	o.Clock, o.Log = e.clock, e.traceLog
	tr := trace.New(e.engine, o)
	e.setHealth(tr, c)
	return tr
}

// traceLog logs the tracer's rare events (trace.Options.Log).
func (e *Exporter) traceLog(warn bool, keyvals ...any) {
	l := level.Info(e.logger)
	if warn {
		l = level.Warn(e.logger)
	}
	_ = l.Log(keyvals...)
}

// Apply installs a (validated) configuration: destinations that are new
// start, removed ones stop and their series disappear, unchanged ones keep
// their counters and schedule.
func (e *Exporter) Apply(c *config.Config) {
	e.mu.Lock()
	defer e.mu.Unlock()
	old := e.cfg
	e.cfg = c
	e.wakeLocked() // jitter_seed may have changed
	if e.engine != nil {
		e.tracer = e.newTracer(c)
		e.applyBudgetLocked()
	}
	e.sched.setConcurrency(c.Concurrency)
	for _, s := range e.dests.relabel(c.LabelNames()) { // every series changes its labels: start every destination afresh
		e.sched.stop(s)
	}
	e.fleet.restart(old, c)
	e.reconcileLocked()
}

// reconcileLocked runs exactly the destinations of the configuration and
// of the discovery sets (a configured destination wins a name): new ones
// start, changed ones restart, gone ones stop and their series go.
func (e *Exporter) reconcileLocked() {
	var configured []config.Destination
	if e.cfg != nil {
		configured = e.cfg.Destinations
	}
	started, stopped := e.dests.reconcile(configured, e.fleet.current())
	for _, s := range stopped {
		e.sched.stop(s)
	}
	e.sched.start(started)
}

// setDiscovered installs selector i's destinations, unless its loop was
// stopped meanwhile (a reload) (fleetHost).
func (e *Exporter) setDiscovered(ctx context.Context, i int, ds []config.Destination) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if ctx.Err() != nil || !e.fleet.set(i, ds) {
		return
	}
	e.reconcileLocked()
}

// Stop stops every destination and waits for in-flight traces.
func (e *Exporter) Stop() {
	e.cancel()
	e.mu.Lock()
	for _, s := range e.dests.sorted() {
		e.sched.stop(s)
	}
	e.sched.close()
	e.mu.Unlock()
	e.sched.wg.Wait()
	e.fleet.wg.Wait()
}
