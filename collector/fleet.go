package collector

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibtracer/ibtracer_exporter/collector/config"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// Inventory lists the ports the SA knows (NodeRecords joined with
// PortInfoRecords; docs/architecture.md, "Discovered destinations").
type Inventory interface {
	Ports(ctx context.Context) ([]InventoryPort, error)
}

// errNoInventory: the SA cannot be asked (no device yet, or no SA
// inventory in this build).
var errNoInventory = errors.New("no SA inventory: the device is not open or the SA cannot be queried")

// refreshTimeout bounds one refresh of a selector.
const refreshTimeout = 30 * time.Second

// fleetHost is what the discovery loops ask of the exporter.
type fleetHost interface {
	waitSeed(ctx context.Context) (string, bool) // seed.go
	currentSeed() string
	// device returns the engine (nil: none open) and a channel closed when
	// the device, the seed, the configuration or the inventory changes.
	device() (*ibmad.Engine, <-chan struct{})
	// setDiscovered installs selector i's destinations unless ctx ended.
	setDiscovered(ctx context.Context, i int, ds []config.Destination)
}

// fleet keeps the destinations of the discover: selectors: one loop per
// selector asks the SA's inventory and draws the sample (fleet_selection.go);
// the exporter traces the union of their sets and the configured
// destinations (Exporter.reconcileLocked).
type fleet struct {
	logger log.Logger
	clock  *clock // the exporter's (Exporter.clock)
	host   fleetHost
	ctx    context.Context // the exporter's: cancelled by Stop
	wg     sync.WaitGroup  // the loops (Stop waits for them)

	mu sync.Mutex // guards the fields below; taken after Exporter.mu
	// inventoryOf is the inventory of an engine (nil: none open):
	// saInventoryOf unless a test gives another (export_test.go).
	inventoryOf func(*ibmad.Engine) Inventory
	sets        [][]config.Destination // per selector, its current set
	cancel      context.CancelFunc     // the running loops'
	refreshes   [2]uint64              // refreshes ok, failed
}

func newFleet(ctx context.Context, logger log.Logger, c *clock, host fleetHost) *fleet {
	return &fleet{ctx: ctx, logger: logger, clock: c, host: host, inventoryOf: saInventoryOf}
}

// inventory returns the inventory of engine and the exporter's own port
// GUID (0: unknown), which no selector picks.
func (f *fleet) inventory(engine *ibmad.Engine) (Inventory, uint64) {
	f.mu.Lock()
	of := f.inventoryOf
	f.mu.Unlock()
	var self uint64
	if engine != nil {
		if p, ok := engine.CachedPort(); ok {
			self = uint64(p.PortGUID)
		}
	}
	return of(engine), self
}

// selectorKey identifies a selector's settings, to tell whether a reload
// changed it (then its discovered set is dropped and found again).
func selectorKey(s config.Selector) string {
	return fmt.Sprintf("%v|%s|%s|%q|%d|%v|%v|%v|%v|%v", s.All, s.NodeType, s.NodeDesc, s.NodeNames, s.Sample,
		s.Rotate, s.Refresh, s.Interval, s.HopSeries(), s.Labels)
}

// restart stops the discovery loops of the previous configuration (old)
// and starts one per selector of c; a selector that did not change keeps
// the set it found until its first refresh.
func (f *fleet) restart(old, c *config.Config) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cancel != nil {
		f.cancel()
		f.cancel = nil
	}
	prev := f.sets
	f.sets = make([][]config.Destination, len(c.Discover))
	for i := range c.Discover {
		if old != nil && i < len(old.Discover) && i < len(prev) && selectorKey(old.Discover[i]) == selectorKey(c.Discover[i]) {
			f.sets[i] = prev[i]
		}
	}
	if len(c.Discover) == 0 {
		return
	}
	ctx, cancel := context.WithCancel(f.ctx)
	f.cancel = cancel
	for i := range c.Discover {
		sel := c.Discover[i]
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			f.loop(ctx, i, &sel, c)
		}()
	}
}

// loop keeps selector i's destinations: it asks the SA every refresh
// period (a failed refresh keeps the ports of the last good one) and
// draws the sample again at every rotation.
func (f *fleet) loop(ctx context.Context, i int, sel *config.Selector, c *config.Config) {
	seed, ok := f.host.waitSeed(ctx)
	if !ok {
		return
	}
	var (
		ports       []InventoryPort
		have        bool
		nextRefresh = (*f.clock).Now()
		logged      refreshLog
	)
	for {
		now := (*f.clock).Now()
		engine, changed := f.host.device()
		inv, self := f.inventory(engine)
		if !now.Before(nextRefresh) {
			got, err := f.refresh(ctx, inv)
			if inv != nil && ctx.Err() != nil {
				return // stopped while asking
			}
			if err == nil {
				ports, have = got, true
			}
			f.countRefresh(err)
			logged.observe(f.logger, i, now, err)
			if inv == nil {
				nextRefresh = now.Add(seedRetry)
			} else {
				nextRefresh = now.Add(time.Duration(sel.Refresh))
			}
		}
		if s := f.host.currentSeed(); s != "" {
			seed = s
		}
		if have {
			all := discoveredDestinations(sel, matchPorts(sel, ports, self), c.NodeNames)
			f.host.setDiscovered(ctx, i, sampleDestinations(all, sel.Sample, seed, i, now, time.Duration(sel.Rotate)))
		}
		wake := nextRefresh
		if sel.Sample > 0 {
			if nr := now.Add(resampleEvery(time.Duration(sel.Rotate), sel.Sample)); nr.Before(wake) {
				wake = nr
			}
		}
		t, stop := (*f.clock).Timer(wake.Sub(now))
		select {
		case <-ctx.Done():
			stop()
			return
		case <-t:
		case <-changed:
			if inv == nil {
				nextRefresh = (*f.clock).Now() // a device (or inventory) may be there now
			}
		}
		stop()
	}
}

// refresh asks inv (nil: none yet) for its ports, within refreshTimeout.
func (f *fleet) refresh(ctx context.Context, inv Inventory) ([]InventoryPort, error) {
	if inv == nil {
		return nil, errNoInventory
	}
	rctx, cancel := context.WithTimeout(ctx, refreshTimeout)
	defer cancel()
	return inv.Ports(rctx)
}

// set installs selector i's destinations; it reports whether they
// changed.
func (f *fleet) set(i int, ds []config.Destination) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i >= len(f.sets) || sameDestinations(f.sets[i], ds) {
		return false
	}
	f.sets[i] = ds
	return true
}

// current returns every selector's current set.
func (f *fleet) current() [][]config.Destination {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]config.Destination(nil), f.sets...)
}

func (f *fleet) countRefresh(err error) {
	f.mu.Lock()
	if err == nil {
		f.refreshes[0]++
	} else {
		f.refreshes[1]++
	}
	f.mu.Unlock()
}

var (
	dRefreshes  = desc("discover_refreshes_total", "Refreshes of the discovered destinations from the SA, by result (ok, error: the previous set is kept).", "result")
	dDiscovered = desc("discovered_destinations", "Destinations a discover selector currently gives (after sampling), by its index in the configuration.", "selector")
)

func (f *fleet) collect(ch chan<- prometheus.Metric) {
	f.mu.Lock()
	ok, failed := f.refreshes[0], f.refreshes[1]
	counts := make([]int, len(f.sets))
	for i, s := range f.sets {
		counts[i] = len(s)
	}
	f.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(dRefreshes, prometheus.CounterValue, float64(ok), "ok")
	ch <- prometheus.MustNewConstMetric(dRefreshes, prometheus.CounterValue, float64(failed), "error")
	for i, n := range counts {
		ch <- prometheus.MustNewConstMetric(dDiscovered, prometheus.GaugeValue, float64(n), strconv.Itoa(i))
	}
}

// sameDestinations reports whether two discovered sets are equal (names
// and LIDs; the rest comes from the selector).
func sameDestinations(a, b []config.Destination) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].LID != b[i].LID {
			return false
		}
	}
	return true
}
