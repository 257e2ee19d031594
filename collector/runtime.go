package collector

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/ibtracer/ibtracer_exporter/agent"
	"github.com/ibtracer/ibtracer_exporter/collector/config"
	"github.com/ibtracer/ibtracer_exporter/collector/fleet"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/linkhealth"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// Runtime is what the exporter runs with, handed over whole by the owner
// of the configuration and the device (internal/service) at every reload
// and every device change (Exporter.Install).
type Runtime struct {
	// Config is the validated configuration (nil: none yet).
	Config *config.Config
	// Engine is the open device's MAD engine (nil: none open); Agent is
	// the agent it hosts (nil: none).
	Engine *ibmad.Engine
	Agent  *agent.Agent
	// DeviceErr says why no device is open (Engine nil): device_up is 0
	// and traces are skipped, not charged to the destinations.
	DeviceErr error
}

// installed is a Runtime with what the exporter derives from it: the
// tracer and its path health checker (nil without an engine and a
// configuration; checker nil: health off). Never changed once stored: a
// new Install replaces it whole.
type installed struct {
	Runtime
	tracer  *trace.Tracer
	checker *linkhealth.Checker
}

// newInstalled completes r with the tracer of its engine under its
// configuration, on clock, logging the tracer's rare events through
// logger, and the tracer's path health checker (nil: health off;
// health.go).
func newInstalled(r Runtime, clock clock, logger log.Logger) *installed {
	in := &installed{Runtime: r}
	if r.Engine == nil || r.Config == nil {
		return in
	}
	o := r.Config.TraceOptions()
	o.Clock = clock
	o.Log = func(warn bool, keyvals ...any) {
		l := level.Info(logger)
		if warn {
			l = level.Warn(logger)
		}
		_ = l.Log(keyvals...)
	}
	in.tracer = trace.New(r.Engine, o)
	in.checker = newChecker(in.tracer, r.Config)
	return in
}

// nodeNames is the configuration's node-name-map (nil: none).
func (r *installed) nodeNames() map[uint64]string {
	if r.Config == nil {
		return nil
	}
	return r.Config.NodeNames
}

// deviceStatus says whether the device is open, or why not.
func (r *installed) deviceStatus() string {
	switch {
	case r.Engine != nil:
		return "open"
	case r.DeviceErr != nil:
		return "not open: " + r.DeviceErr.Error()
	}
	return "not open yet"
}

// evidence are the evidence: section's settings (on false: evidence off,
// or no configuration yet).
func (r *installed) evidence() (on bool, latency time.Duration, maxLinks int) {
	if r.Config == nil || !r.Config.Evidence.Enabled {
		return false, 0, 0
	}
	return true, time.Duration(r.Config.Evidence.LatencyThreshold), r.Config.Evidence.MaxLinks
}

// runState is the exporter's runtime, swapped whole, and the seed of the
// phases: the local port GUID once the device is open (SetSeed), unless
// the configuration's jitter_seed overrides it. The scheduler and the
// discovery loops wait for the seed (fleet.Host, seedSource).
type runState struct {
	rt    atomic.Pointer[installed] // never nil once newRunState returned
	clock *clock                    // the exporter's (Exporter.clock)
	wake  func()                    // tells the scheduler something changed (scheduler.wake)
	count func() int                // the number of destinations (startSeed)

	mu      sync.Mutex    // guards the fields below
	seed    string        // the port GUID ("" until known)
	changed chan struct{} // closed when the seed, the runtime or the inventory changes
	// inventoryOf is the inventory of an engine (nil: none open):
	// fleet.SAInventory unless a test gives another (export_test.go).
	inventoryOf func(*ibmad.Engine) fleet.Inventory
}

func newRunState(c *clock, seed string, wake func(), count func() int) *runState {
	st := &runState{clock: c, wake: wake, count: count, seed: seed, changed: make(chan struct{}), inventoryOf: fleet.SAInventory}
	st.rt.Store(&installed{})
	return st
}

// load is the runtime now.
func (st *runState) load() *installed { return st.rt.Load() }

// store installs rt and tells whoever waits that it changed.
func (st *runState) store(rt *installed) {
	st.rt.Store(rt)
	st.signal()
}

// signal tells whoever waits for a seed or a device (the discovery loops,
// the destinations not begun yet) that something changed.
func (st *runState) signal() {
	st.mu.Lock()
	close(st.changed)
	st.changed = make(chan struct{})
	st.mu.Unlock()
	st.wake()
}

// setSeed sets the port GUID the phases derive from.
func (st *runState) setSeed(seed string) {
	st.mu.Lock()
	st.seed = seed
	st.mu.Unlock()
	st.signal()
}

// CurrentSeed returns the seed of the phases ("" while none is known):
// the configuration's jitter_seed, else the port GUID.
func (st *runState) CurrentSeed() string {
	if c := st.load().Config; c != nil && c.JitterSeed != "" {
		return c.JitterSeed
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.seed
}

// startSeed is the seed, learnt from the engine when none is set, and
// the number of destinations (seedSource).
func (st *runState) startSeed() (string, int) {
	for {
		seed, engine := st.CurrentSeed(), st.load().Engine
		if seed == "" && st.learnSeed(engine) {
			continue
		}
		return seed, st.count()
	}
}

// seedRetry is how often a loop that has an engine but no seed asks the
// engine for the local port again.
const seedRetry = time.Second

// WaitSeed blocks until the phase's seed is known: from SetSeed, from the
// configuration's jitter_seed, or from the engine's local port GUID once a
// device is open (so that the phase never depends on the order in which
// the device owner calls Install and SetSeed). It returns false when ctx
// ends first.
func (st *runState) WaitSeed(ctx context.Context) (string, bool) {
	for {
		st.mu.Lock()
		changed := st.changed
		st.mu.Unlock()
		seed, engine := st.CurrentSeed(), st.load().Engine
		if seed != "" {
			return seed, true
		}
		if st.learnSeed(engine) {
			continue
		}
		c, stop := (*st.clock).Timer(seedRetry)
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
func (st *runState) learnSeed(engine *ibmad.Engine) bool {
	if engine == nil {
		return false
	}
	p, err := engine.Port()
	if err != nil || p.PortGUID == 0 {
		return false
	}
	st.mu.Lock()
	if st.seed == "" {
		st.seed = p.PortGUID.String()
	}
	st.mu.Unlock()
	return true
}

// Inventory is the SA inventory of the open device (nil: none), the
// exporter's own port GUID (0: unknown) and the channel closed at the
// next change (fleet.Host).
func (st *runState) Inventory() (fleet.Inventory, uint64, <-chan struct{}) {
	st.mu.Lock() // the channel first: a change after it closes it
	of, changed := st.inventoryOf, st.changed
	st.mu.Unlock()
	engine := st.load().Engine
	var self uint64
	if engine != nil {
		if p, ok := engine.CachedPort(); ok {
			self = uint64(p.PortGUID)
		}
	}
	return of(engine), self, changed
}
