package fleet

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibtracer/ibtracer_exporter/collector/config"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// Inventory lists the ports the SA knows (NodeRecords joined with
// PortInfoRecords; docs/architecture.md, "Discovered destinations").
type Inventory interface {
	Ports(ctx context.Context) ([]InventoryPort, error)
}

// ErrNoInventory: the SA cannot be asked (no device yet, or no SA
// inventory in this build).
var ErrNoInventory = errors.New("no SA inventory: the device is not open or the SA cannot be queried")

// refreshTimeout bounds one refresh of a selector.
const refreshTimeout = 30 * time.Second

// retry is how often a loop without an inventory looks again.
const retry = time.Second

// Host is what the discovery loops ask of the exporter.
type Host interface {
	// WaitSeed blocks until the seed of the samples is known (false: ctx
	// ended first).
	WaitSeed(ctx context.Context) (string, bool)
	// CurrentSeed is the seed now ("" while none is known).
	CurrentSeed() string
	// Inventory returns the inventory of the open device (nil: none),
	// the exporter's own port GUID (0: unknown), which no selector
	// picks, and a channel closed when the device, the seed, the
	// configuration or the inventory changes.
	Inventory() (inv Inventory, self uint64, changed <-chan struct{})
}

// Fleet keeps the destinations of the discover: selectors: one loop per
// selector asks the host's inventory and draws the sample (selection.go);
// the exporter traces the union of their sets (Current) and the
// configured destinations.
type Fleet struct {
	logger  log.Logger
	clock   *ibmad.Clock // the exporter's (tests swap the clock it points to)
	host    Host
	changed func()          // told when a selector's set changed (the exporter reconciles)
	ctx     context.Context // the exporter's: cancelled when it stops
	wg      sync.WaitGroup  // the loops (Wait)

	mu        sync.Mutex             // guards the fields below
	sets      [][]config.Destination // per selector, its current set
	cancel    context.CancelFunc     // the running loops'
	refreshes [2]uint64              // refreshes ok, failed
	cutShort  uint64                 // refreshes whose table came back cut short (ErrTableCutShort)
}

// New returns a Fleet whose loops run under ctx, ask host, and call
// changed whenever a selector's set changes. Restart starts them.
func New(ctx context.Context, logger log.Logger, clock *ibmad.Clock, host Host, changed func()) *Fleet {
	return &Fleet{ctx: ctx, logger: logger, clock: clock, host: host, changed: changed}
}

// Wait waits for the loops to end (once ctx is cancelled).
func (f *Fleet) Wait() { f.wg.Wait() }

// selectorKey identifies a selector's settings, to tell whether a reload
// changed it (then its discovered set is dropped and found again).
func selectorKey(s config.Selector) string {
	return fmt.Sprintf("%v|%s|%s|%q|%d|%v|%v|%v|%v|%v", s.All, s.NodeType, s.NodeDesc, s.NodeNames, s.Sample,
		s.Rotate, s.Refresh, s.Interval, s.HopSeries(), s.Labels)
}

// Restart stops the discovery loops of the previous configuration (old)
// and starts one per selector of c; a selector that did not change keeps
// the set it found until its first refresh.
func (f *Fleet) Restart(old, c *config.Config) {
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
func (f *Fleet) loop(ctx context.Context, i int, sel *config.Selector, c *config.Config) {
	seed, ok := f.host.WaitSeed(ctx)
	if !ok {
		return
	}
	var (
		ports       []InventoryPort
		have        bool
		nextRefresh = (*f.clock).Now()
		logged      refreshLog
		lids        lidSampler
	)
	for {
		now := (*f.clock).Now()
		inv, self, changed := f.host.Inventory()
		if li, ok := inv.(LIDInventory); ok && sel.All && sel.Sample > 0 && !now.Before(lids.fallbackUntil) {
			switch f.lidStep(ctx, i, sel, c, li, &lids, &logged, self, &seed, now, changed) {
			case stepStop:
				return
			case stepDone:
				nextRefresh = now.Add(time.Duration(sel.Refresh)) // a table, if the inventory changes kind
				continue
			}
			nextRefresh = now // sampling by LID failed: the table, until lids.fallbackUntil
		}
		if !now.Before(nextRefresh) {
			got, err := f.refresh(ctx, inv)
			if inv != nil && ctx.Err() != nil {
				return // stopped while asking
			}
			cut := errors.Is(err, ErrTableCutShort)
			if cut {
				err = nil // the list is whole
			}
			if err == nil {
				f.countCut(cut)
				logged.cut(f.logger, i, now, cut)
			}
			if err == nil {
				ports, have = got, true
			}
			f.countRefresh(err)
			logged.observe(f.logger, i, now, err)
			if inv == nil {
				nextRefresh = now.Add(retry)
			} else {
				nextRefresh = now.Add(time.Duration(sel.Refresh))
			}
		}
		if s := f.host.CurrentSeed(); s != "" {
			seed = s
		}
		if have {
			all := Destinations(sel, MatchPorts(sel, ports, self), c.NodeNames)
			if f.set(ctx, i, Sample(all, sel.Sample, seed, i, now, time.Duration(sel.Rotate))) {
				f.changed()
			}
		}
		wake := nextRefresh
		if sel.Sample > 0 {
			if nr := now.Add(resampleEvery(time.Duration(sel.Rotate), sel.Sample)); nr.Before(wake) {
				wake = nr
			}
		}
		if !f.wait(ctx, now, wake, changed) {
			return
		}
		if inv == nil {
			nextRefresh = (*f.clock).Now() // a device (or inventory) may be there now
		}
	}
}

// wait waits until wake, or until changed closes; false when ctx ended.
func (f *Fleet) wait(ctx context.Context, now, wake time.Time, changed <-chan struct{}) bool {
	t, stop := (*f.clock).Timer(wake.Sub(now))
	defer stop()
	select {
	case <-ctx.Done():
		return false
	case <-t:
	case <-changed:
	}
	return true
}

// What lidStep did: waited or drew the sample (done), failed (the loop
// reads the table instead, for a refresh period), or saw ctx end.
const (
	stepDone = iota
	stepFallback
	stepStop
)

// lidStep is one turn of a selector that samples by LID (lidsample.go):
// it waits out the start's spread (startDelay), or draws the sample,
// installs it and waits for the next draw. A pass that asked the ports
// counts as a refresh. A pass that fails (the local leaf's SwitchInfo or
// the ports' SMPs refused: an SMP firewall) makes the loop read the
// SA's table instead for a refresh period, said once.
func (f *Fleet) lidStep(ctx context.Context, i int, sel *config.Selector, c *config.Config, inv LIDInventory, s *lidSampler,
	logged *refreshLog, self uint64, seed *string, now time.Time, changed <-chan struct{}) int {
	if s.notBefore.IsZero() {
		s.notBefore = now.Add(startDelay(*seed, i, time.Duration(sel.Refresh)))
	}
	if now.Before(s.notBefore) { // a fleet that starts at once does not ask in step
		if !f.wait(ctx, now, s.notBefore, changed) {
			return stepStop
		}
		return stepDone
	}
	if cur := f.host.CurrentSeed(); cur != "" {
		*seed = cur
	}
	pctx, cancel := context.WithTimeout(ctx, refreshTimeout) // LIDs nobody answers cost timeouts
	got, err := s.pass(pctx, inv, sel, i, *seed, self, now)
	cancel()
	if ctx.Err() != nil {
		return stepStop
	}
	if c, ch := s.failing.Observe(err != nil, now); ch && (err != nil || c.Known) {
		if err != nil {
			level.Warn(f.logger).Log("msg", "discovery cannot sample by LID; reading the SA's table instead", "selector", i, "err", err)
		} else {
			level.Info(f.logger).Log("msg", "discovery samples by LID again", "selector", i)
		}
	}
	if err != nil {
		s.fallbackUntil = now.Add(time.Duration(sel.Refresh))
		return stepFallback
	}
	if s.topAt.Equal(now) { // once a refresh period: the top LID read again, the answers kept as long
		f.countRefresh(nil)
		logged.observe(f.logger, i, now, nil)
	}
	if f.set(ctx, i, Destinations(sel, got, c.NodeNames)) {
		f.changed()
	}
	if !f.wait(ctx, now, now.Add(resampleEvery(time.Duration(sel.Rotate), sel.Sample)), changed) {
		return stepStop
	}
	return stepDone
}

// refresh asks inv (nil: none yet) for its ports, within refreshTimeout.
func (f *Fleet) refresh(ctx context.Context, inv Inventory) ([]InventoryPort, error) {
	if inv == nil {
		return nil, ErrNoInventory
	}
	rctx, cancel := context.WithTimeout(ctx, refreshTimeout)
	defer cancel()
	return inv.Ports(rctx)
}

// set installs selector i's destinations, unless its loop (ctx) was
// stopped meanwhile (a reload); it reports whether they changed.
func (f *Fleet) set(ctx context.Context, i int, ds []config.Destination) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ctx.Err() != nil || i >= len(f.sets) || sameDestinations(f.sets[i], ds) {
		return false
	}
	f.sets[i] = ds
	return true
}

// Current returns every selector's current set.
func (f *Fleet) Current() [][]config.Destination {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]config.Destination(nil), f.sets...)
}

// countCut counts a refresh whose table came back cut short.
func (f *Fleet) countCut(cut bool) {
	if cut {
		f.mu.Lock()
		f.cutShort++
		f.mu.Unlock()
	}
}

func (f *Fleet) countRefresh(err error) {
	f.mu.Lock()
	if err == nil {
		f.refreshes[0]++
	} else {
		f.refreshes[1]++
	}
	f.mu.Unlock()
}

var (
	dRefreshes  = prometheus.NewDesc("ibtracer_discover_refreshes_total", "Refreshes of the discovered destinations, by result (ok, error: the previous set is kept): the SA's table read, or, sampling by LID, the top LID read again.", []string{"result"}, nil)
	dCutShort   = prometheus.NewDesc("ibtracer_discover_tables_cut_short_total", "Refreshes whose SA NodeRecord table came back cut short, so that the ports were listed one LID at a time (a Get per LID).", nil, nil)
	dDiscovered = prometheus.NewDesc("ibtracer_discovered_destinations", "Destinations a discover selector currently gives (after sampling), by its index in the configuration.", []string{"selector"}, nil)
)

// Collect emits the discovery's series: refreshes by result and each
// selector's destinations.
func (f *Fleet) Collect(ch chan<- prometheus.Metric) {
	f.mu.Lock()
	ok, failed, cut := f.refreshes[0], f.refreshes[1], f.cutShort
	counts := make([]int, len(f.sets))
	for i, s := range f.sets {
		counts[i] = len(s)
	}
	f.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(dRefreshes, prometheus.CounterValue, float64(ok), "ok")
	ch <- prometheus.MustNewConstMetric(dRefreshes, prometheus.CounterValue, float64(failed), "error")
	ch <- prometheus.MustNewConstMetric(dCutShort, prometheus.CounterValue, float64(cut))
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
