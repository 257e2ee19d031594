package collector

import (
	"context"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ibtracer/ibtracer_exporter/agent"
	"github.com/ibtracer/ibtracer_exporter/collector/config"
	"github.com/ibtracer/ibtracer_exporter/collector/fleet"
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

// Apply installs configuration c with the device the exporter has now,
// as Install does at a reload.
func (e *Exporter) Apply(c *config.Config) {
	r := e.st.load().Runtime
	r.Config = c
	e.Install(r)
}

// SetDevice installs a device (engine and agent, or why there is none)
// with the configuration the exporter has now, as Install does when the
// device changes.
func (e *Exporter) SetDevice(engine *ibmad.Engine, a *agent.Agent, err error) {
	r := e.st.load().Runtime
	r.Engine, r.Agent, r.DeviceErr = engine, a, err
	e.Install(r)
}

// freshTracer installs the runtime again with a new tracer: a fresh
// health checker, with no shared readings.
func (e *Exporter) freshTracer() {
	e.changing.Lock()
	defer e.changing.Unlock()
	e.st.rt.Store(newInstalled(e.st.load().Runtime, e.clock, e.logger))
}

// config is the configuration installed (nil: none).
func (e *Exporter) config() *config.Config { return e.st.load().Config }

// engine is the engine installed (nil: none).
func (e *Exporter) engine() *ibmad.Engine { return e.st.load().Engine }

// currentSeed is the seed of the phases ("" while none is known).
func (e *Exporter) currentSeed() string { return e.st.CurrentSeed() }

// setInventory replaces the source of discovered destinations: inv
// whatever the device (nil: the SA's, as in production).
func (e *Exporter) setInventory(inv fleet.Inventory) {
	e.st.mu.Lock()
	if inv == nil {
		e.st.inventoryOf = fleet.SAInventory
	} else {
		e.st.inventoryOf = func(*ibmad.Engine) fleet.Inventory { return inv }
	}
	e.st.mu.Unlock()
	e.st.signal()
}

// refreshCounts returns the discovery refreshes that succeeded and
// failed, as ibtracer_discover_refreshes_total says.
func (e *Exporter) refreshCounts() (ok, failed uint64) {
	ch := make(chan prometheus.Metric, 64)
	e.fleet.Collect(ch)
	close(ch)
	for m := range ch {
		var d dto.Metric
		if err := m.Write(&d); err != nil || d.Counter == nil || !strings.Contains(m.Desc().String(), "discover_refreshes_total") {
			continue
		}
		switch d.Label[0].GetValue() {
		case "ok":
			ok = uint64(d.Counter.GetValue())
		case "error":
			failed = uint64(d.Counter.GetValue())
		}
	}
	return ok, failed
}

// destinations returns the states sorted by name.
func (e *Exporter) destinations() []*destState { return e.dests.sorted() }

// healthMADs is what the path health spent so far.
func (e *Exporter) healthMADs() uint64 {
	mads, _ := e.health.read()
	return mads
}

// healthChecker is the current tracer's health checker (nil: health off).
func (e *Exporter) healthChecker() *linkhealth.Checker { return e.st.load().checker }

// get returns the state of the destination named name (nil: none).
func (d *destSet) get(name string) *destState {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.byName[name]
}
