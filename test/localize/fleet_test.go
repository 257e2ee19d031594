package localizeeval

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/agent"
	"github.com/ibtracer/ibtracer_exporter/collector/config"
	"github.com/ibtracer/ibtracer_exporter/collector/fleet"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/internal/fakeclock"
	"github.com/ibtracer/ibtracer_exporter/linkhealth"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// The fleet localization evaluation (docs/metrics.md, "Fleet verdict"):
// many exporters on one in-process fat tree, each tracing and checking
// the health of the sample of destinations a `discover: [{all: true,
// sample: N}]` selector draws, one interval after another on a fake
// clock. This file builds the fleet and runs its intervals; the faults,
// the scoring and the table are in eval_test.go.

// locParams size a localization fleet.
type locParams struct {
	leaves, spines, hostsPerLeaf, linksPerPair int
	exporters, sample                          int
	interval                                   time.Duration
	workers                                    int    // exporters tracing at once
	seed                                       uint64 // the fabric's drop decisions
	// shareValidation is the exporters' share_validation (0: the
	// default); the fleets at scale take the packaged one.
	shareValidation time.Duration
	// startRounds: the fleet starts as the exporter does, each
	// destination's first trace a part of the start window later
	// (startRound), and has run this many intervals before the first
	// trial (0: every destination traced from the first interval).
	startRounds int
}

// locTimeout is the exporters' MAD timeout: long enough that no MAD times
// out because the machine is busy (the race detector, other tests on the
// same cores). The fabric reports its losses at once (sim.Options.ReportLoss).
const locTimeout = 10 * time.Second

// locFleet is the fabric and its exporters.
type locFleet struct {
	tb   testing.TB
	p    locParams
	f    *sim.Fabric
	clk  *fakeclock.Clock
	exps []*locExporter
	// rounds is the number of intervals run so far.
	rounds int
	// all: every CA port, as discover: all: true names them; an
	// exporter's candidates are all but its own port (sampleOf).
	all []config.Destination
}

// locExporter is one exporter: its tracer and health checker, and the
// seed its sample is drawn with (its port GUID, as Exporter.SetSeed).
type locExporter struct {
	host string
	seed string
	self uint64 // port GUID, never in its own sample
	tr   *trace.Tracer
	hc   *linkhealth.Checker
	sel  config.Selector
	lid  uint16 // its own port's, never in its sample
	samp *sampler
}

// locPath is what one exporter's trace of one destination found in one
// interval.
type locPath struct {
	dest string
	res  *trace.Result
	ph   *linkhealth.PathHealth
}

func newLocFleet(tb testing.TB, p locParams) *locFleet {
	tb.Helper()
	topo, err := sim.FatTree2(p.leaves, p.spines, p.hostsPerLeaf, p.linksPerPair)
	if err != nil {
		tb.Fatal(err)
	}
	// The fabric's drop decisions depend on the seed and the MADs, not on
	// which exporter's goroutine gets there first, and it reports what it
	// loses at once: the exporters' timeout (locTimeout) is far longer than
	// any scheduling delay of a loaded machine, so only the injected
	// faults lose MADs, and a trial's evidence is the same in every run.
	f, err := sim.New(topo, sim.Options{Seed: p.seed, ReportLoss: true})
	if err != nil {
		tb.Fatal(err)
	}
	lf := &locFleet{tb: tb, p: p, f: f, clk: fakeclock.New(time.Unix(1_800_000_000, 0))}
	ports := simPorts(f)
	yml := fmt.Sprintf("interval: %s\ntimeout: %s\nretries: 1\nhealth:\n  enabled: true\n  xmit_wait_limit: 0.05\ndiscover:\n  - all: true\n    sample: %d\n",
		p.interval, locTimeout, p.sample)
	if p.shareValidation > 0 {
		yml += fmt.Sprintf("share_validation: %s\n", p.shareValidation)
	}
	cfg, err := config.Parse("test.yml", []byte(yml))
	if err != nil {
		tb.Fatal(err)
	}
	sel := cfg.Discover[0]
	lf.all = fleet.Destinations(&sel, fleet.MatchPorts(&sel, ports, 0), nil)
	hosts, isExporter := fleetHosts(tb, f, p.exporters)
	for _, h := range hosts {
		tr, err := f.Attach(h, 0)
		if err != nil {
			tb.Fatal(err)
		}
		// The fabric reports a lost MAD at once; the wall clock would time
		// out only a MAD that reached a node that never answers (none
		// here). The fake clock ages the caches, one interval per round.
		eng := ibmad.NewEngine(tr, ibmad.Options{Timeout: locTimeout, Retries: 1})
		tb.Cleanup(func() { eng.Close() })
		// The agents stamp their answers with the fake clock's time, so
		// that an answer is the same bytes in every run (the fabric's drop
		// decisions hash them).
		if _, err := agent.New(eng, agent.Config{RatePerSource: 1e6, Clock: lf.clk}); err != nil {
			tb.Fatal(err)
		}
		if !isExporter[h] {
			continue
		}
		o := cfg.TraceOptions()
		o.Clock = lf.clk
		tracer := trace.New(eng, o)
		ho := cfg.HealthOptions() // as the exporter's (collector/health.go)
		pa, err := eng.Port()
		if err != nil {
			tb.Fatal(err)
		}
		seed := pa.PortGUID.String()
		lf.exps = append(lf.exps, &locExporter{host: h, seed: seed, self: uint64(pa.PortGUID),
			tr: tracer, hc: linkhealth.NewChecker(tracer, ho), sel: sel, lid: pa.LID,
			samp: newSampler(lf.all, seed, time.Duration(sel.Rotate))})
	}
	return lf
}

// sampleOf is the destinations exporter e traces now: the ports the
// selector matches but its own, sampled with its seed as
// package fleet does.
//
// The candidates are shared (at 10,000 exporters a list each would take
// gigabytes): a sample of the list without its own port is the sample of
// the whole list when that leaves its port out, else the sample of one
// more, less its port (a candidate's score does not depend on the
// others). The exporter's sampler draws what fleet.Sample would
// (sample_test.go).
func (lf *locFleet) sampleOf(e *locExporter) []config.Destination {
	s := e.samp.draw(e.sel.Sample, lf.clk.Now())
	if !slices.ContainsFunc(s, func(d config.Destination) bool { return d.LID == e.lid }) {
		return s
	}
	s = e.samp.draw(e.sel.Sample+1, lf.clk.Now())
	return slices.DeleteFunc(s, func(d config.Destination) bool { return d.LID == e.lid })
}

// startRound is the interval (0: the first) of destination d's first
// trace by exporter e when the fleet starts at once: the exporter waits
// a part of its start window (collector/schedule.go, traceStartSpread:
// 8 minutes, at most 8 intervals) that a hash of its seed and the
// destination gives (startOffset), then traces at its phase. So the
// exporters' shared verdicts and facts (share_validation) expire each at
// its own time, as in a fleet (docs/architecture.md, "Load on one
// switch"), not all in the same interval.
func (lf *locFleet) startRound(e *locExporter, d config.Destination) int {
	window := min(8*time.Minute, 8*lf.p.interval)
	return int(time.Duration(fleet.Hash64("start", e.seed, d.Name)%uint64(window)) / lf.p.interval)
}

// start runs the fleet's first p.startRounds intervals, each destination
// from its startRound on.
func (lf *locFleet) start(ctx context.Context) {
	for lf.rounds < lf.p.startRounds {
		lf.round(ctx)
	}
}

// round advances the clock one interval and has every exporter trace
// (and check the health of) each destination of its sample once. It
// returns the paths per exporter, in the exporters' order.
func (lf *locFleet) round(ctx context.Context) [][]locPath {
	lf.clk.Add(lf.p.interval)
	out := make([][]locPath, len(lf.exps))
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < lf.p.workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				e := lf.exps[i]
				for _, d := range lf.sampleOf(e) {
					if lf.rounds < lf.p.startRounds && lf.startRound(e, d) > lf.rounds {
						continue
					}
					r := e.tr.Trace(ctx, d.Target())
					var ph *linkhealth.PathHealth
					if len(r.Hops) >= 2 {
						ph = e.hc.Check(ctx, r)
					}
					out[i] = append(out[i], locPath{dest: d.Name, res: r, ph: ph})
				}
			}
		}()
	}
	for i := range lf.exps {
		work <- i
	}
	close(work)
	wg.Wait()
	lf.rounds++
	return out
}

// fleetHosts lists the fabric's hosts and picks exporters of them, evenly
// spread.
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

// simPorts is the SA's view of a simulated fabric: every active port, as
// NodeRecords joined with PortInfoRecords would give it.
func simPorts(f *sim.Fabric) []fleet.InventoryPort {
	var ports []fleet.InventoryPort
	for _, n := range f.Nodes() {
		for num, p := range n.Ports {
			if p == nil || (num == 0 && !n.IsSwitch()) || p.LID == 0 {
				continue
			}
			ports = append(ports, fleet.InventoryPort{NodeGUID: uint64(n.GUID), PortGUID: uint64(p.GUID), LID: p.LID,
				Port: uint8(num), NodeType: n.Type, NodeDesc: n.Desc})
		}
	}
	return ports
}
