package collector

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/go-kit/log"

	"github.com/ibtracer/ibtracer_exporter/collector/config"
	"github.com/ibtracer/ibtracer_exporter/collector/fleet"
	"github.com/ibtracer/ibtracer_exporter/collector/pages"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

const namespace = "ibtracer"

// clock is the scheduler's time source, the module's one clock type
// (docs/architecture.md, "One clock"); tests replace it with a fake one
// so that a schedule of many intervals runs without waiting for them.
type clock = ibmad.Clock

// Exporter traces the destinations of its Runtime on their schedule and
// is the Prometheus collector of what it finds. It wires the parts that
// do the work: the scheduler (schedule.go), the discover: selectors
// (package fleet), the destinations and what their traces found
// (destset.go, destination.go), and their readers: the scrape
// (metrics.go), the pages (package pages, through views.go) and the
// logs (history.go).
type Exporter struct {
	logger log.Logger
	clock  clock // the exporter's one clock: the scheduler's, the loops', the tracer's (tests set a fake one)

	ctx    context.Context // cancelled by Stop
	cancel context.CancelFunc

	st     *runState    // the runtime (configuration, device, tracer) and the seed
	sched  *scheduler   // when each destination is traced
	fleet  *fleet.Fleet // the destinations the discover: selectors find
	dests  *destSet     // the destinations traced, and what they found
	modes  modeStats    // traces by discovery mode (discoverymode.go)
	health healthTotals
	skips  skipCounts // traces not run (tracing.go)
	// leftForgot counts the left links forgotten over the bound (leftdown.go).
	leftForgot atomic.Uint64

	evidence linkEvidence // the scrape's link evidence (evidence.go)
	ctrs     ctrLog       // what the logs last said of each link's counters (health_log.go)

	// changing is held while the set of destinations changes (Install,
	// a selector's new set, Stop), so that one change is applied whole
	// before the next; it guards no field, and the parts it calls take
	// only their own locks.
	changing sync.Mutex
}

// New returns an Exporter with no runtime yet; see Install. seed is the
// seed of the phases ("": the port GUID, once a device is open).
func New(logger log.Logger, seed string) *Exporter {
	ctx, cancel := context.WithCancel(context.Background())
	e := &Exporter{logger: logger, ctx: ctx, cancel: cancel, clock: ibmad.WallClock{}, dests: newDestSet()}
	e.st = newRunState(&e.clock, seed, func() { e.sched.wake() }, e.dests.count)
	e.sched = newScheduler(ctx, &e.clock, e.st)
	e.sched.run = e.traceOnce
	e.fleet = fleet.New(ctx, logger, &e.clock, e.st, e.reconcile)
	return e
}

// Install hands the exporter its runtime whole: the configuration and
// the device (engine and hosted agent, or why there is none). A new
// configuration starts the destinations that are new, stops the removed
// ones (their series disappear) and keeps the unchanged ones' counters
// and schedule. A new engine gets a new tracer and the configuration's
// MAD budget. Install(Runtime{Config: c, DeviceErr: err}) reports a lost
// device: device_up drops to 0 and traces are skipped, not charged to
// the destinations, until an Install with an engine.
func (e *Exporter) Install(r Runtime) {
	e.changing.Lock()
	defer e.changing.Unlock()
	e.sched.markStart() // the first traces' start window (schedule.go)
	old := e.st.load().Config
	rt := newInstalled(r, e.clock, e.logger)
	if rt.tracer != nil {
		r.Engine.SetBudget(ibmad.Budget{Rate: r.Config.MADRate, PerTarget: r.Config.MADRatePerTarget, Clock: e.clock}) // device_metrics.go; the exporter's one clock
	}
	e.st.store(rt) // jitter_seed or the device may have changed: the waiting loops look again
	c := r.Config
	if c == nil || c == old {
		return
	}
	e.sched.setConcurrency(c.Concurrency)
	for _, s := range e.dests.relabel(c.LabelNames()) { // every series changes its labels: start every destination afresh
		e.sched.stop(s)
	}
	e.fleet.Restart(old, c)
	e.reconcileLocked()
}

// SetSeed sets the identity the trace phases derive from: the local port
// GUID, once the device is open (the configuration's jitter_seed, when
// set, overrides it). Destinations do not schedule a trace before a seed
// is known, and follow a new one from their next run on.
func (e *Exporter) SetSeed(seed string) { e.st.setSeed(seed) }

// reconcile applies a selector's new set (fleet.New's changed).
func (e *Exporter) reconcile() {
	e.changing.Lock()
	defer e.changing.Unlock()
	e.reconcileLocked()
}

// reconcileLocked runs exactly the destinations of the configuration and
// of the discovery sets (a configured destination wins a name): new ones
// start, changed ones restart, gone ones stop and their series go
// (e.changing held).
func (e *Exporter) reconcileLocked() {
	var configured []config.Destination
	if c := e.st.load().Config; c != nil {
		configured = c.Destinations
	}
	started, stopped := e.dests.reconcile(configured, e.fleet.Current())
	for _, s := range stopped {
		e.sched.stop(s)
	}
	e.sched.start(started)
}

// Stop stops every destination and waits for in-flight traces.
func (e *Exporter) Stop() {
	e.cancel()
	e.changing.Lock()
	for _, s := range e.dests.sorted() {
		e.sched.stop(s)
	}
	e.sched.close()
	e.changing.Unlock()
	e.sched.wg.Wait()
	e.fleet.Wait()
}

// The pages (package pages) read a snapshot of the destinations, taken
// once per request.

// TracesHandler serves /traces (pages.Traces): the latest trace of
// every destination, or of those the query names, as JSON or HTML.
func (e *Exporter) TracesHandler() http.Handler { return pages.Traces(e.snapshot) }

// LandingHandler serves the landing page at / (pages.LandingPage): what
// the exporter is, links to its pages, the destinations' status, the
// suspected links and the unhealthy links.
func (e *Exporter) LandingHandler(l pages.Landing) http.Handler {
	return pages.LandingPage(e.snapshot, l)
}

// Traces returns the latest trace of every destination.
func (e *Exporter) Traces() []pages.TraceView { return pages.Views(e.snapshot()) }

// snapshot is what the pages read of the exporter now.
func (e *Exporter) snapshot() pages.Snapshot {
	rt := e.st.load()
	on, latency, _ := rt.evidence()
	snap := pages.Snapshot{Device: rt.deviceStatus(), Evidence: on, EvidenceLatency: latency, NodeNames: rt.nodeNames()}
	dests := e.dests.sorted()
	snap.Destinations = make([]pages.Destination, len(dests))
	for i, s := range dests {
		snap.Destinations[i] = s.snapshot()
	}
	return snap
}
