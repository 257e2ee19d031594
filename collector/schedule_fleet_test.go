package collector

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/ibtracer/ibtracer_exporter/agent"
	"github.com/ibtracer/ibtracer_exporter/collector/fleet"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// simInventory is the SA's view of a simulated fabric: every active
// port, as NodeRecords joined with PortInfoRecords would give it. Each
// call stands for the two SA GetTable requests of a refresh.
type simInventory struct {
	ports []fleet.InventoryPort
	calls *atomic.Int64
}

func newSimInventory(f *sim.Fabric, calls *atomic.Int64) *simInventory {
	inv := &simInventory{calls: calls}
	for _, n := range f.Nodes() {
		for num, p := range n.Ports {
			if p == nil || (num == 0 && !n.IsSwitch()) || p.LID == 0 {
				continue
			}
			inv.ports = append(inv.ports, fleet.InventoryPort{NodeGUID: uint64(n.GUID), PortGUID: uint64(p.GUID), LID: p.LID,
				Port: uint8(num), NodeType: n.Type, NodeDesc: n.Desc})
		}
	}
	return inv
}

func (s *simInventory) Ports(context.Context) ([]fleet.InventoryPort, error) {
	s.calls.Add(1)
	return s.ports, nil
}

var debugFleet = false

// fleetParams size a fleet simulation.
type fleetParams struct {
	leaves, spines, hostsPerLeaf int
	exporters, sample            int
	interval, rotate, refresh    time.Duration
	rotations                    int // measured rotation periods, after the first
}

// fleetReport is what a fleet simulation measured over its window.
type fleetReport struct {
	seconds                  int
	switchMean, switchPeak   map[string]float64
	worstRatio               float64 // max over switches of peak / mean
	worstSwitch              string
	saPerSecond              float64 // SA requests (refreshes x 2 tables) per second, fleet-wide
	pairsCovered, pairsTotal int     // (exporter, destination port) pairs traced at least once
	destsCovered, destsTotal int     // destination ports traced by some exporter
	traces                   int
}

// runFleet runs p.exporters exporters (scheduler, tracer, discovery, and
// a hosted agent each), every one attached at its own host of one
// simulated fat tree whose other hosts run agents too, all on one fake
// clock, with `discover: [{all: true, sample: N, rotate: R}]`. It counts
// the SMPs each switch receives per second of the fake clock.
func runFleet(tb testing.TB, p fleetParams) fleetReport {
	tb.Helper()
	topo, err := sim.FatTree2(p.leaves, p.spines, p.hostsPerLeaf, 1)
	if err != nil {
		tb.Fatal(err)
	}
	f, err := sim.New(topo, sim.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	hosts, isExporter := fleetHosts(tb, f, p.exporters)
	start := time.Unix(1800000000, 0)
	fc := newFakeClock(start)
	var (
		mu     sync.Mutex
		smps   = map[string]map[int64]int{}
		pairs  = map[[2]string]bool{}
		dests  = map[string]bool{}
		traces int
		from   = start.Add(p.rotate) // measured: after the first rotation period
		to     = from.Add(time.Duration(p.rotations) * p.rotate)
	)
	count := func(sw string, sec int64) {
		mu.Lock()
		defer mu.Unlock()
		if smps[sw] == nil {
			smps[sw] = map[int64]int{}
		}
		smps[sw][sec]++
	}
	var saCalls atomic.Int64
	inv := newSimInventory(f, &saCalls)
	cfg, err := configParse(fmt.Sprintf("interval: %s\ntimeout: 500ms\nretries: 1\ndiscover:\n  - all: true\n    sample: %d\n    rotate: %s\n    refresh: %s\n",
		p.interval, p.sample, p.rotate, p.refresh))
	if err != nil {
		tb.Fatal(err)
	}
	var exps []*Exporter
	for _, h := range hosts {
		tr, err := f.Attach(h, 0)
		if err != nil {
			tb.Fatal(err)
		}
		var t ibmad.Transport = tr
		if isExporter[h] {
			t = &smpCounter{Transport: tr, f: f, clock: fc, count: count}
		}
		eng := ibmad.NewEngine(t, ibmad.Options{})
		tb.Cleanup(func() { eng.Close() })
		if _, err := agent.New(eng, agent.Config{RatePerSource: 1e6}); err != nil {
			tb.Fatal(err)
		}
		if !isExporter[h] {
			continue
		}
		e := New(log.NewNopLogger(), "")
		e.clock = fc
		src := h
		e.onTrace(func(name string, at time.Time) {
			if at.Before(from) || !at.Before(to) {
				return
			}
			mu.Lock()
			pairs[[2]string{src, name}] = true
			dests[name] = true
			traces++
			mu.Unlock()
		}, nil)
		e.setInventory(inv)
		e.SetDevice(eng, nil, nil)
		pa, err := eng.Port()
		if err != nil {
			tb.Fatal(err)
		}
		e.SetSeed(pa.PortGUID.String())
		e.Apply(cfg)
		exps = append(exps, e)
	}
	defer func() {
		for _, e := range exps {
			e.Stop()
		}
	}()
	// Every exporter parks p.sample destination loops and one discovery
	// loop on the clock between events.
	parked := p.exporters * (p.sample + 1)
	for {
		deadline := time.Now().Add(120 * time.Second)
		for fc.Pending() != parked {
			if time.Now().After(deadline) {
				tb.Fatalf("fleet: %d timers pending after 120 s, want %d", fc.Pending(), parked)
			}
			time.Sleep(time.Millisecond)
		}
		if !fc.Now().Before(to) {
			break
		}
		fc.Advance()
	}
	mu.Lock()
	defer mu.Unlock()
	r := fleetReport{seconds: int(to.Sub(from) / time.Second), switchMean: map[string]float64{}, switchPeak: map[string]float64{},
		traces: traces, pairsCovered: len(pairs), pairsTotal: p.exporters * (len(hosts) - 1),
		destsCovered: len(dests), destsTotal: len(hosts)}
	var names []string
	for sw := range smps {
		names = append(names, sw)
	}
	sort.Strings(names)
	for _, sw := range names {
		total, peak := 0, 0
		for s := from.Unix(); s < to.Unix(); s++ {
			v := smps[sw][s]
			total += v
			if v > peak {
				peak = v
			}
		}
		mean := float64(total) / float64(r.seconds)
		if debugFleet {
			var series []int
			for s := from.Unix(); s < to.Unix(); s++ {
				series = append(series, smps[sw][s])
			}
			tb.Logf("%s: %v", sw, series)
		}
		r.switchMean[sw], r.switchPeak[sw] = mean, float64(peak)
		if mean > 0 && float64(peak)/mean > r.worstRatio {
			r.worstRatio, r.worstSwitch = float64(peak)/mean, sw
		}
	}
	// Refreshes over the whole run (the first one of each exporter included).
	r.saPerSecond = float64(2*saCalls.Load()) / to.Sub(start).Seconds()
	return r
}

func (r fleetReport) log(tb testing.TB) {
	tb.Helper()
	var busiest string
	for sw, m := range r.switchMean {
		if busiest == "" || m > r.switchMean[busiest] {
			busiest = sw
		}
	}
	tb.Logf("%d traces in %d s; busiest switch %s: mean %.1f SMPs/s, peak %.0f/s; worst peak/mean %.2f (%s: mean %.1f, peak %.0f)",
		r.traces, r.seconds, busiest, r.switchMean[busiest], r.switchPeak[busiest], r.worstRatio, r.worstSwitch,
		r.switchMean[r.worstSwitch], r.switchPeak[r.worstSwitch])
	tb.Logf("SA requests: %.3f/s fleet-wide; pairs covered %d of %d (%.1f%%); destinations covered %d of %d",
		r.saPerSecond, r.pairsCovered, r.pairsTotal, 100*float64(r.pairsCovered)/float64(r.pairsTotal), r.destsCovered, r.destsTotal)
}

// fleet64 is the fleet of the benchmark: 64 exporters on a fat tree of
// 128 hosts (8 leaves, 4 spines), 24 sampled destinations each, traced
// every 5 s, the sample rotating every minute.
var fleet64 = fleetParams{leaves: 8, spines: 4, hostsPerLeaf: 16, exporters: 64, sample: 24,
	interval: 5 * time.Second, rotate: time.Minute, refresh: 5 * time.Minute, rotations: 2}

// BenchmarkFleet runs the fleet simulation and reports the per-switch
// SMP rate (the busiest switch's mean and peak second, and the worst
// peak/mean ratio), the SA request rate and the pair coverage
// (go test -run XXX -bench Fleet -benchtime 1x ./collector).
func BenchmarkFleet(b *testing.B) {
	for i := 0; i < b.N; i++ {
		r := runFleet(b, fleet64)
		r.log(b)
		var busiest string
		for sw, m := range r.switchMean {
			if busiest == "" || m > r.switchMean[busiest] {
				busiest = sw
			}
		}
		b.ReportMetric(r.switchMean[busiest], "busiest-switch-SMPs/s")
		b.ReportMetric(r.switchPeak[busiest], "busiest-switch-peak-SMPs/s")
		b.ReportMetric(r.worstRatio, "worst-peak/mean")
		b.ReportMetric(r.saPerSecond, "SA-requests/s")
		b.ReportMetric(100*float64(r.pairsCovered)/float64(r.pairsTotal), "pairs-covered-%")
	}
}

// TestFleetNoLockstep: the fleet of the benchmark: no switch sees a peak
// second above three times its mean, and the rotations cover the pairs.
// (About a minute and a half on a loaded 2-core machine; -short skips it.)
func TestFleetNoLockstep(t *testing.T) {
	if testing.Short() {
		t.Skip("fleet simulation")
	}
	r := runFleet(t, fleet64)
	r.log(t)
	if r.worstRatio > 3 {
		t.Errorf("switch %s: peak %.0f SMPs/s, %.2f times its mean %.1f/s: want at most 3",
			r.worstSwitch, r.switchPeak[r.worstSwitch], r.worstRatio, r.switchMean[r.worstSwitch])
	}
	// Three periods (the one before the window turns over during it) of
	// 24 of 127 destinations: about 1-(1-24/127)^3 = 47% of the pairs; a
	// sample that did not rotate would cover 19%.
	if cov := float64(r.pairsCovered) / float64(r.pairsTotal); cov < 0.35 {
		t.Errorf("pairs covered: %.1f%%, want about 47%%", 100*cov)
	}
	if r.destsCovered < r.destsTotal-1 {
		t.Errorf("destinations covered by the fleet: %d of %d", r.destsCovered, r.destsTotal)
	}
}

// fleetHosts returns f's hosts and which of them run an exporter:
// exporters of them, spread over the leaves (every k-th host).
func fleetHosts(tb testing.TB, f *sim.Fabric, exporters int) ([]string, map[string]bool) {
	tb.Helper()
	var hosts []string
	for _, n := range f.Nodes() {
		if !n.IsSwitch() {
			hosts = append(hosts, n.Name)
		}
	}
	if len(hosts) < exporters+1 {
		tb.Fatalf("%d hosts for %d exporters", len(hosts), exporters)
	}
	step := len(hosts) / exporters
	isExporter := map[string]bool{}
	for i := 0; i < exporters; i++ {
		isExporter[hosts[i*step]] = true
	}
	return hosts, isExporter
}
