package collector

import (
	"sort"
	"sync"

	"github.com/ibtracer/ibtracer_exporter/collector/config"
)

// destSet is the destinations being traced: the configured ones and those
// the discover: selectors found (fleet.go), by name, and the label names
// of their series. The scrape and the pages read it; the exporter changes
// it on reload and when a selector's set changes (Exporter.reconcileLocked).
type destSet struct {
	hists *hists // the exporter-wide histograms every destination feeds

	mu         sync.RWMutex // guards byName and labelNames
	byName     map[string]*destState
	labelNames []string // the configuration's label names, in order
	// relabeled are the states relabel dropped, by name, until the
	// reconcile that follows: their successors take their left links
	// (leftdown.go, carryLeft).
	relabeled map[string]*destState
}

func newDestSet() *destSet {
	return &destSet{hists: newHists(), byName: map[string]*destState{}}
}

// sorted returns the states sorted by name.
func (d *destSet) sorted() []*destState {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.sortedLocked()
}

func (d *destSet) sortedLocked() []*destState {
	out := make([]*destState, 0, len(d.byName))
	for _, s := range d.byName {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].cfg.Name < out[j].cfg.Name })
	return out
}

func (d *destSet) count() int {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return len(d.byName)
}

// scrape returns the label names of the per-destination series (the
// destination's, then the configuration's) and the states sorted by
// name, both as of one moment.
func (d *destSet) scrape() ([]string, []*destState) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return append([]string{destLabel}, d.labelNames...), d.sortedLocked()
}

// relabel sets the configuration's label names. When they change, every
// series changes its labels: every destination is dropped (and returned,
// to be stopped), to start afresh.
func (d *destSet) relabel(names []string) (dropped []*destState) {
	d.mu.Lock()
	defer d.mu.Unlock()
	same := len(names) == len(d.labelNames)
	for i := range names {
		same = same && names[i] == d.labelNames[i]
	}
	d.labelNames = names
	if same {
		return nil
	}
	d.relabeled = map[string]*destState{}
	for name, s := range d.byName {
		dropped = append(dropped, s)
		d.relabeled[name] = s
		delete(d.byName, name)
	}
	return dropped
}

// reconcile keeps exactly the destinations configured and discovered (a
// configured destination wins a name): new ones are added, changed ones
// replaced, gone ones removed. It returns the states to start and those
// to stop; a destination whose target, interval and labels did not change
// keeps its state, counters and schedule.
func (d *destSet) reconcile(configured []config.Destination, discovered [][]config.Destination) (started, stopped []*destState) {
	d.mu.Lock()
	defer d.mu.Unlock()
	keep := map[string]bool{}
	add := func(c config.Destination, discovered bool) {
		if keep[c.Name] {
			return
		}
		keep[c.Name] = true
		old, ok := d.byName[c.Name]
		if ok && old.sameAs(c, d.labelNames) {
			return
		} else if ok {
			stopped = append(stopped, old)
		}
		s := newDestState(c, d.labelNames, d.hists)
		if !ok {
			old, ok = d.relabeled[c.Name]
		}
		if ok {
			carryLeft(old, s) // the links its path left that are down (leftdown.go)
		}
		s.atPhase = discovered
		d.byName[c.Name] = s
		started = append(started, s)
	}
	for _, c := range configured {
		add(c, false)
	}
	for _, set := range discovered {
		for _, c := range set {
			add(c, true)
		}
	}
	d.relabeled = nil
	for name, s := range d.byName {
		if !keep[name] {
			stopped = append(stopped, s)
			delete(d.byName, name)
		}
	}
	return started, stopped
}
