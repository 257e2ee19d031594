package collector

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/ibtracer/ibtracer_exporter/agent"
	"github.com/ibtracer/ibtracer_exporter/collector/config"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

const namespace = "ibtracer"

// Exporter schedules the traces and holds what they found.
type Exporter struct {
	logger log.Logger
	seed   string

	mu         sync.RWMutex
	cfg        *config.Config
	labelNames []string
	dests      map[string]*destState
	tracer     *trace.Tracer
	engine     *ibmad.Engine
	agent      *agent.Agent
	deviceErr  error
	schedMu    sync.Mutex // after mu when both are held
	sched      scheduler  // schedule.go
	starting   []*destState
	changed    chan struct{} // closed when the seed or the device changes
	skipped    map[string]uint64
	hists      *hists

	// Discovered destinations (discover.go): per selector, its current
	// set; the loops' cancel; refreshes ok and failed.
	inventory  Inventory
	discovered [][]config.Destination
	discCancel context.CancelFunc
	refreshes  [2]uint64
	disc       discoveryStats // discovery.go
	health     healthState    // path health (health.go)

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	clock clock
	// budgetClock, when set (tests), is the MAD budget's clock.
	budgetClock ibmad.Clock
	// traceStarted and traceDone, when set (tests), learn when each trace
	// starts and ends.
	traceStarted func(name string, at time.Time)
	traceDone    func(name string)
}

// New returns an Exporter with no device yet; see SetDevice.
func New(logger log.Logger, seed string) *Exporter {
	ctx, cancel := context.WithCancel(context.Background())
	return &Exporter{logger: logger, seed: seed, dests: map[string]*destState{}, ctx: ctx, cancel: cancel,
		clock: realClock{}, changed: make(chan struct{}), skipped: map[string]uint64{},
		hists: newHists()}
}

// SetDevice gives the exporter its engine (and hosted agent, or nil);
// err says why there is none yet. SetDevice(nil, nil, err) reports a lost
// device: device_up drops to 0 and traces are skipped, not charged to the
// destinations, until the next SetDevice with an engine.
func (e *Exporter) SetDevice(engine *ibmad.Engine, a *agent.Agent, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.engine, e.agent, e.deviceErr = engine, a, err
	e.tracer, e.health.checker = nil, nil
	if engine != nil && e.cfg != nil {
		e.tracer = e.newTracer(e.cfg)
		e.applyBudgetLocked()
	}
	e.wakeLocked()
}

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

// wakeLocked tells the loops waiting for a seed that something changed.
func (e *Exporter) wakeLocked() {
	if e.changed != nil {
		close(e.changed)
	}
	e.changed = make(chan struct{})
	e.wakeSeedWaitersLocked()
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
	e.setConcurrencyLocked(c.Concurrency)
	names := c.LabelNames()
	relabel := len(names) != len(e.labelNames)
	for i := range names {
		if !relabel && names[i] != e.labelNames[i] {
			relabel = true
		}
	}
	e.labelNames = names
	if relabel { // every series changes its labels: start every destination afresh
		for name, s := range e.dests {
			e.stopLocked(s)
			delete(e.dests, name)
		}
	}
	e.restartDiscoveryLocked(old, c)
	e.reconcileLocked()
}

func minDuration(a, b time.Duration) time.Duration {
	if a < b {
		return a
	}
	return b
}

func (e *Exporter) traceOnce(ctx context.Context, s *destState, interval time.Duration) {
	e.mu.RLock()
	tr, names, hc := e.tracer, e.cfg.NodeNames, e.health.checker
	e.mu.RUnlock()
	if e.traceStarted != nil {
		e.traceStarted(s.cfg.Name, e.clock.Now())
	}
	if e.traceDone != nil {
		defer e.traceDone(s.cfg.Name)
	}
	if tr == nil {
		e.skip(skipDeviceDown) // not the destination's failure (docs/architecture.md, "The life of the device")
		return
	}
	tctx, cancel := context.WithTimeout(ctx, interval)
	if s.cfg.AllPaths() {
		e.traceSet(tctx, ctx, tr, s, names) // paths.go
		cancel()
		return
	}
	r := tr.Trace(tctx, s.target)
	ph := checkHealth(tctx, hc, r)
	cancel()
	if ctx.Err() != nil {
		return // stopped (reload or shutdown): do not record a cancelled trace
	}
	if r.Status == trace.StatusDevice {
		// The local device failed (a send error, the port gone): a fact
		// about this node, not about the destination.
		e.skip(skipDeviceError)
		level.Warn(e.logger).Log("msg", "trace skipped: device error", "destination", s.cfg.Name, "err", r.Err)
		return
	}
	if names != nil { // node_name_map: the result owns its hops
		trace.NameHops(names.Name, r)
	}
	compact(r)
	s.record(r)
	e.disc.add(r)
	// State changes and path changes are logged once (logstate.go); each
	// trace only at debug.
	e.logObserved(s.observe(r))
	e.recordHealth(s.cfg.Name, ph)
	if r.Status != trace.StatusOK {
		level.Debug(e.logger).Log("msg", "trace failed", "destination", s.cfg.Name, "address", s.target.Address(),
			"status", r.Status, "reason", r.Reason, "err", r.Err)
	} else {
		level.Debug(e.logger).Log("msg", "traced", "destination", s.cfg.Name, "hops", r.PathHops(), "mads", r.MADs,
			"duration", r.Duration, "fast_path", r.FastPath)
	}
}

// Reasons a scheduled trace is skipped: they count in
// ibtracer_traces_skipped_total, never against a destination.
const (
	skipDeviceDown  = "device_down"  // no device open (not yet, or lost)
	skipDeviceError = "device_error" // the device failed during the trace
)

var skipReasons = []string{skipDeviceDown, skipDeviceError}

func (e *Exporter) skip(reason string) {
	e.mu.Lock()
	e.skipped[reason]++
	e.mu.Unlock()
}

// Stop stops every destination and waits for in-flight traces.
func (e *Exporter) Stop() {
	e.cancel()
	e.stopAll()
	e.wg.Wait()
}

// destinations returns the states sorted by name.
func (e *Exporter) destinations() []*destState {
	e.mu.RLock()
	defer e.mu.RUnlock()
	out := make([]*destState, 0, len(e.dests))
	for _, s := range e.dests {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].cfg.Name < out[j].cfg.Name })
	return out
}
