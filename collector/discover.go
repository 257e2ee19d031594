package collector

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibtracer/ibtracer_exporter/collector/config"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// Inventory lists the ports the SA knows (NodeRecords joined with
// PortInfoRecords; docs/architecture.md, "Discovered destinations").
type Inventory interface {
	Ports(ctx context.Context) ([]InventoryPort, error)
}

// InventoryFor, when set, builds the SA inventory of an engine (the
// exporter's, once its device is open). Tests set an Inventory with
// SetInventory instead.
var InventoryFor func(*ibmad.Engine) Inventory

// errNoInventory: the SA cannot be asked (no device yet, or no SA
// inventory in this build).
var errNoInventory = errors.New("no SA inventory: the device is not open or the SA cannot be queried")

// refreshTimeout bounds one refresh of a selector.
const refreshTimeout = 30 * time.Second

// SetInventory replaces the source of discovered destinations (tests;
// nil: InventoryFor the engine).
func (e *Exporter) SetInventory(inv Inventory) {
	e.mu.Lock()
	e.inventory = inv
	e.wakeLocked()
	e.mu.Unlock()
}

func (e *Exporter) currentInventory() (Inventory, uint64) {
	e.mu.RLock()
	inv, engine := e.inventory, e.engine
	e.mu.RUnlock()
	var self uint64
	if engine != nil {
		if p, ok := engine.CachedPort(); ok {
			self = uint64(p.PortGUID)
		}
		if inv == nil && InventoryFor != nil {
			inv = InventoryFor(engine)
		}
	}
	return inv, self
}

// selectorKey identifies a selector's settings, to tell whether a reload
// changed it (then its discovered set is dropped and found again).
func selectorKey(s config.Selector) string {
	return fmt.Sprintf("%v|%s|%s|%q|%d|%v|%v|%v|%v|%v", s.All, s.NodeType, s.NodeDesc, s.NodeNames, s.Sample,
		s.Rotate, s.Refresh, s.Interval, s.HopSeries(), s.Labels)
}

// restartDiscoveryLocked stops the discovery loops of the previous
// configuration and starts one per selector of c; a selector that did not
// change keeps the set it found until its first refresh.
func (e *Exporter) restartDiscoveryLocked(old, c *config.Config) {
	if e.discCancel != nil {
		e.discCancel()
		e.discCancel = nil
	}
	prev := e.discovered
	e.discovered = make([][]config.Destination, len(c.Discover))
	for i := range c.Discover {
		if old != nil && i < len(old.Discover) && i < len(prev) && selectorKey(old.Discover[i]) == selectorKey(c.Discover[i]) {
			e.discovered[i] = prev[i]
		}
	}
	if len(c.Discover) == 0 {
		return
	}
	ctx, cancel := context.WithCancel(e.ctx)
	e.discCancel = cancel
	for i := range c.Discover {
		sel := c.Discover[i]
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			e.discoverLoop(ctx, i, &sel, c)
		}()
	}
}

// discoverLoop keeps selector i's destinations: it asks the SA every
// refresh period (a failed refresh keeps the ports of the last good one)
// and draws the sample again at every rotation.
func (e *Exporter) discoverLoop(ctx context.Context, i int, sel *config.Selector, c *config.Config) {
	seed, ok := e.waitSeed(ctx)
	if !ok {
		return
	}
	var (
		ports       []InventoryPort
		have        bool
		nextRefresh = e.clock.Now()
		logged      refreshLog
	)
	for {
		now := e.clock.Now()
		inv, self := e.currentInventory()
		e.mu.RLock()
		changed := e.changed
		e.mu.RUnlock()
		if !now.Before(nextRefresh) {
			err := errNoInventory
			if inv != nil {
				rctx, cancel := context.WithTimeout(ctx, refreshTimeout)
				var got []InventoryPort
				got, err = inv.Ports(rctx)
				cancel()
				if ctx.Err() != nil {
					return
				}
				if err == nil {
					ports, have = got, true
				}
			}
			e.countRefresh(err)
			logged.observe(e.logger, i, now, err)
			if inv == nil {
				nextRefresh = now.Add(seedRetry)
			} else {
				nextRefresh = now.Add(time.Duration(sel.Refresh))
			}
		}
		if s := e.currentSeed(); s != "" {
			seed = s
		}
		if have {
			all := discoveredDestinations(sel, matchPorts(sel, ports, self), c.NodeNames)
			e.setDiscovered(ctx, i, sampleDestinations(all, sel.Sample, seed, i, now, time.Duration(sel.Rotate)))
		}
		wake := nextRefresh
		if sel.Sample > 0 {
			if nr := now.Add(resampleEvery(time.Duration(sel.Rotate), sel.Sample)); nr.Before(wake) {
				wake = nr
			}
		}
		t, stop := e.clock.Timer(wake.Sub(now))
		select {
		case <-ctx.Done():
			stop()
			return
		case <-t:
		case <-changed:
			if inv == nil {
				nextRefresh = e.clock.Now() // a device (or inventory) may be there now
			}
		}
		stop()
	}
}

// setDiscovered installs selector i's destinations, unless its loop was
// stopped meanwhile (a reload).
func (e *Exporter) setDiscovered(ctx context.Context, i int, ds []config.Destination) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if ctx.Err() != nil || i >= len(e.discovered) || sameDestinations(e.discovered[i], ds) {
		return
	}
	e.discovered[i] = ds
	e.reconcileLocked()
}

func (e *Exporter) countRefresh(err error) {
	e.mu.Lock()
	if err == nil {
		e.refreshes[0]++
	} else {
		e.refreshes[1]++
	}
	e.mu.Unlock()
}

// reconcileLocked runs exactly the destinations of the configuration and
// of the discovery sets (a configured destination wins a name): new ones
// start, changed ones restart, gone ones stop and their series go.
func (e *Exporter) reconcileLocked() {
	keep := map[string]bool{}
	add := func(d config.Destination, discovered bool) {
		if keep[d.Name] {
			return
		}
		keep[d.Name] = true
		old, ok := e.dests[d.Name]
		if ok && old.sameAs(d, e.labelNames) {
			return // same target, interval and labels: keep counters and schedule
		} else if ok {
			e.stopLocked(old)
		}
		s := newDestState(d, e.labelNames, e.hists)
		s.atPhase = discovered
		e.dests[d.Name] = s
		e.startLocked(s)
	}
	if e.cfg != nil {
		for _, d := range e.cfg.Destinations {
			add(d, false)
		}
	}
	for _, set := range e.discovered {
		for _, d := range set {
			add(d, true)
		}
	}
	for name, s := range e.dests {
		if !keep[name] {
			e.stopLocked(s)
			delete(e.dests, name)
		}
	}
	e.kickLocked()
}

var (
	dRefreshes  = desc("discover_refreshes_total", "Refreshes of the discovered destinations from the SA, by result (ok, error: the previous set is kept).", "result")
	dDiscovered = desc("discovered_destinations", "Destinations a discover selector currently gives (after sampling), by its index in the configuration.", "selector")
)

func (e *Exporter) collectDiscovered(ch chan<- prometheus.Metric) {
	e.mu.RLock()
	ok, failed := e.refreshes[0], e.refreshes[1]
	counts := make([]int, len(e.discovered))
	for i, s := range e.discovered {
		counts[i] = len(s)
	}
	e.mu.RUnlock()
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
