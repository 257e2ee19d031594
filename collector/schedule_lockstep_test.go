package collector

import (
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// smpCounter wraps an exporter's transport and counts, per switch and per
// second of the fake clock, the SMPs addressed to that switch: the load
// each switch's SMA sees from the whole fleet of exporters.
type smpCounter struct {
	*sim.Transport
	f     *sim.Fabric
	clock *fakeClock
	count func(sw string, sec int64)
}

func (c *smpCounter) Send(p *ibmad.Packet) error {
	m := &p.MAD
	var target *sim.Node
	switch m.MgmtClass() {
	case ibmad.ClassSubnDR:
		node := c.Transport.Node()
		for i := 1; i <= int(m.DRHopCount()) && node != nil; i++ {
			out := int(m[128+i])
			if out <= 0 || out > node.NumPorts() || node.Ports[out].Remote == nil {
				node = nil
				break
			}
			node = node.Ports[out].Remote.Node
		}
		target = node
	case ibmad.ClassSubnLID:
		if port := c.f.PortByLID(p.Addr.LID); port != nil {
			target = port.Node
		}
	}
	if target != nil && target.IsSwitch() {
		c.count(target.Name, c.clock.Now().Unix())
	}
	return c.Transport.Send(p)
}

// TestExportersDoNotTraceInLockstep: 32 exporters on one fabric, each at
// its own node, with the same configuration, opened in the order the
// daemon uses (destinations applied first, then the device, then the
// seed): a destination's trace start times spread over the interval, and
// no switch sees a lockstep peak of SMPs.
func TestExportersDoNotTraceInLockstep(t *testing.T) {
	const (
		exporters = 32
		interval  = 10 * time.Second
		rounds    = 3 // steady-state intervals measured, after the first trace
	)
	topo, err := sim.FatTree2(4, 2, 9, 1)
	if err != nil {
		t.Fatal(err)
	}
	f, err := sim.New(topo, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lid := func(n string) uint16 {
		v, err := f.LIDOf(n, 0)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	cfg := mustConfig(t, fmt.Sprintf(`
interval: 10s
timeout: 500ms
retries: 1
validate: false
destinations:
  - {name: a, lid: %d}
  - {name: b, lid: %d}
`, lid("H3-8"), lid("H2-8")))
	dests := len(cfg.Destinations)
	var hosts []string
	for _, n := range f.Nodes() {
		if !n.IsSwitch() && n.Name != "H3-8" && n.Name != "H2-8" && len(hosts) < exporters {
			hosts = append(hosts, n.Name)
		}
	}
	if len(hosts) != exporters {
		t.Fatalf("%d hosts", len(hosts))
	}

	start := time.Unix(1800000000, 0) // on the 10 s grid
	fc := newFakeClock(start)
	var (
		mu     sync.Mutex
		starts = map[string][][]time.Time{} // destination -> per exporter -> start times
		smps   = map[string]map[int64]int{} // switch -> second -> SMPs
	)
	count := func(sw string, sec int64) {
		mu.Lock()
		defer mu.Unlock()
		if smps[sw] == nil {
			smps[sw] = map[int64]int{}
		}
		smps[sw][sec]++
	}
	for _, d := range cfg.Destinations {
		starts[d.Name] = make([][]time.Time, exporters)
	}
	exps := make([]*Exporter, exporters)
	engines := make([]*ibmad.Engine, exporters)
	for i, h := range hosts {
		tr, err := f.Attach(h, 0)
		if err != nil {
			t.Fatal(err)
		}
		engines[i] = ibmad.NewEngine(&smpCounter{Transport: tr, f: f, clock: fc, count: count}, ibmad.Options{})
		defer engines[i].Close()
		e := New(log.NewNopLogger(), "")
		e.clock = fc
		i := i
		e.onTrace(func(name string, at time.Time) {
			mu.Lock()
			starts[name][i] = append(starts[name][i], at)
			mu.Unlock()
		}, nil)
		exps[i] = e
		defer e.Stop()
		e.Apply(cfg)
	}
	// The daemon applies the configuration at once and opens the device
	// later: every destination loop has parked on the clock by then.
	fc.WaitPending(t, exporters*dests, "before the device opens")
	for i, e := range exps {
		e.SetDevice(engines[i], nil, nil)
		p, err := engines[i].Port()
		if err != nil {
			t.Fatal(err)
		}
		e.SetSeed(p.PortGUID.String())
	}
	// Measure whole intervals of the steady state: from the second
	// interval on, after every destination's first trace (those run within
	// 2 s of the start, to show data soon).
	from := start.Add(interval)
	to := from.Add(rounds * interval)
	for {
		fc.WaitPending(t, exporters*dests, "between traces")
		if fc.Now().After(to) {
			break
		}
		fc.Advance()
	}

	mu.Lock()
	defer mu.Unlock()
	checkStartsSpread(t, starts, start, from, interval, rounds)
	checkSwitchPeaks(t, smps, from, interval, rounds, dests)
}

// checkStartsSpread fails t unless every exporter traced every
// destination once per interval in [from, from+rounds*interval) and no
// second of the interval holds more than twice its share of the starts.
func checkStartsSpread(t *testing.T, starts map[string][][]time.Time, start, from time.Time, interval time.Duration, rounds int) {
	t.Helper()
	buckets := int(interval / time.Second)
	to := from.Add(time.Duration(rounds) * interval)
	for name, per := range starts {
		hist := make([]int, buckets)
		n := 0
		for i, ts := range per {
			k := 0
			for _, at := range ts {
				if at.Before(from) || !at.Before(to) {
					continue
				}
				hist[int(at.Sub(start)%interval/time.Second)]++
				n++
				k++
			}
			if k != rounds {
				t.Errorf("destination %s, exporter %d: %d traces in %d intervals: %v", name, i, k, rounds, ts)
			}
		}
		mean := float64(n) / float64(buckets)
		for b, v := range hist {
			if float64(v) > 2*mean {
				t.Errorf("destination %s: %d of %d trace starts fall in second %d of the %v interval (mean %.1f): lockstep; histogram %v",
					name, v, n, b, interval, mean, hist)
			}
		}
	}
}

// checkSwitchPeaks fails t when a switch's SMPs per second over the same
// intervals peak like lockstep. In lockstep the fleet's traces of the D
// destinations land in D seconds of the interval, a peak of (interval/D)
// = 5 times the mean; independent phases leave only the noise of a few
// dozen traces in 10 seconds (seen: at most 2.2 times the mean, on a leaf
// that 18 traces touch). The bound is half the lockstep peak.
func checkSwitchPeaks(t *testing.T, smps map[string]map[int64]int, from time.Time, interval time.Duration, rounds, dests int) {
	t.Helper()
	buckets := int(interval / time.Second)
	maxPeak := float64(buckets) / float64(dests) / 2
	first := from.Unix()
	last := first + int64(rounds*buckets)
	var names []string
	for sw := range smps {
		names = append(names, sw)
	}
	sort.Strings(names)
	for _, sw := range names {
		total, peak, peakAt := 0, 0, int64(0)
		var series []int
		for s := first; s < last; s++ {
			v := smps[sw][s]
			total += v
			if v > peak {
				peak, peakAt = v, s
			}
			series = append(series, v)
		}
		mean := float64(total) / float64(last-first)
		t.Logf("switch %s: %d SMPs in %d s, mean %.1f/s, peak %d/s; %v", sw, total, last-first, mean, peak, series)
		if total > 0 && float64(peak) > maxPeak*mean {
			t.Errorf("switch %s: %d SMPs in second %d, %.1f times the mean of %.1f/s: a lockstep peak",
				sw, peak, peakAt-first, float64(peak)/mean, mean)
		}
	}
}
