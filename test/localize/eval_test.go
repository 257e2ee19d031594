package localizeeval

import (
	"context"
	"flag"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/localize"
)

var locScale = flag.String("loc.scale", "", "fleet of TestFleetLocalization: \"\" (64 exporters, 24 destinations each), 1k or 10k (1,000 or 10,000 exporters with the packaged sample of 8; scripts/bench-fleet.sh)")

var locTrials = flag.Int("loc.trials", 0, "trials per fault kind of TestFleetLocalization (0: a quick run; 20 prints the table of docs/metrics.md, \"Fleet verdict\")")

// Fault kinds of the evaluation.
const (
	faultNone     = "none"
	faultDrop     = "drop"      // a link dropping a share of its MADs, both ways
	faultDead     = "dead"      // a link down, the SM has not re-routed
	faultDiverge  = "diverge"   // a switch's data plane sends a LID out of another cable than its LFT
	faultWidth    = "width"     // a link trained at a lower width
	faultCongest  = "congested" // a link whose ports wait to send
	locDropRate   = 0.3
	locRounds     = 3 // intervals after the fault
	locQuickTrial = 1
)

var locKinds = []string{faultDrop, faultDead, faultDiverge, faultWidth, faultCongest, faultNone}

// locCongestShare is the share of the time a congested port waits to
// send (the fleet's xmit_wait_limit is 5 %); the in-process fabric's tick
// is 8 ns (its links run 4X QDR).
const locCongestShare = 0.2

// locFault is one injected fault: the links that are the right answer
// (a diverging switch: its cables to the node that sees the mismatch)
// and how to take it back.
type locFault struct {
	kind   string
	what   string
	truth  map[localize.Link]bool
	repair func()
}

// simLinkKey is the key of the link at port of node name: the smaller
// node GUID first, as linkhealth and the series key it.
func (lf *locFleet) simLinkKey(name string, port uint8) localize.Link {
	p := lf.f.Node(name).Ports[port]
	return localize.NewLink(p.Node.GUID, p.Num, p.Remote.Node.GUID, p.Remote.Num)
}

// cableEnd is one end of a cable of the fabric.
type cableEnd struct {
	node string
	port uint8
}

// links lists every cable once, from its end with the smaller GUID.
func (lf *locFleet) links() []cableEnd {
	var out []cableEnd
	for _, n := range lf.f.Nodes() {
		for _, p := range n.Ports[1:] {
			if p != nil && p.Remote != nil && p.Node.GUID < p.Remote.Node.GUID {
				out = append(out, cableEnd{n.Name, p.Num})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].node != out[j].node {
			return out[i].node < out[j].node
		}
		return out[i].port < out[j].port
	})
	return out
}

// inject applies one fault of kind at a place rng picks.
func (lf *locFleet) inject(kind string, rng *rand.Rand) locFault {
	lf.tb.Helper()
	links := lf.links()
	l := links[rng.IntN(len(links))]
	key := lf.simLinkKey(l.node, l.port)
	remote := lf.f.Node(l.node).Ports[l.port].Remote
	must := func(err error) {
		if err != nil {
			lf.tb.Fatal(err)
		}
	}
	fault := locFault{kind: kind, truth: map[localize.Link]bool{key: true}, repair: func() {},
		what: fmt.Sprintf("%s[%d]-%s[%d]", l.node, l.port, remote.Node.Name, remote.Num)}
	switch kind {
	case faultNone:
		fault.truth, fault.what = nil, "-"
	case faultDrop:
		must(lf.f.SetDropRate(l.node, int(l.port), locDropRate))
		must(lf.f.SetDropRate(remote.Node.Name, int(remote.Num), locDropRate))
		fault.repair = func() {
			must(lf.f.SetDropRate(l.node, int(l.port), 0))
			must(lf.f.SetDropRate(remote.Node.Name, int(remote.Num), 0))
		}
	case faultDead:
		must(lf.f.SetLinkState(l.node, int(l.port), false, false))
		fault.repair = func() { must(lf.f.SetLinkState(l.node, int(l.port), true, false)) }
	case faultWidth:
		must(lf.f.SetLinkWidth(l.node, int(l.port), true))
		fault.repair = func() { must(lf.f.SetLinkWidth(l.node, int(l.port), false)) }
	case faultCongest:
		must(lf.f.SetXmitWaitRate(l.node, int(l.port), locCongestShare/8e-9, lf.clk.Now))
		fault.repair = func() { must(lf.f.SetXmitWaitRate(l.node, int(l.port), 0, nil)) }
	case faultDiverge:
		return lf.diverge(rng)
	default:
		lf.tb.Fatalf("fault kind %q", kind)
	}
	return fault
}

// diverge makes a spine send a leaf's own LID out of the other parallel
// cable to that leaf than its LFT says: the validation MADs to the leaf
// arrive by another port (status 7). The spine is the one an exporter's
// leaf sends the leaf's LID to (a spine no route to the leaf crosses
// would diverge unseen by anyone). The right answer is either cable
// between them.
func (lf *locFleet) diverge(rng *rand.Rand) locFault {
	lf.tb.Helper()
	e := lf.exps[rng.IntN(len(lf.exps))]
	src := lf.f.Node(e.host).Ports[1].Remote.Node // its leaf
	var leaf string
	for leaf == "" || leaf == src.Name {
		leaf = fmt.Sprintf("L%d", rng.IntN(lf.p.leaves))
	}
	lid, err := lf.f.LIDOf(leaf, 0)
	if err != nil {
		lf.tb.Fatal(err)
	}
	sp := src.Ports[lf.f.LFT(src.Name)[lid]].Remote.Node.Name
	programmed := lf.f.LFT(sp)[lid]
	truth := map[localize.Link]bool{}
	var other uint8
	for _, p := range lf.f.Node(sp).Ports[1:] {
		if p != nil && p.Remote != nil && p.Remote.Node.Name == leaf {
			truth[lf.simLinkKey(sp, p.Num)] = true
			if p.Num != programmed {
				other = p.Num
			}
		}
	}
	if other == 0 {
		lf.tb.Fatalf("%s: no parallel cable to %s", sp, leaf)
	}
	if err := lf.f.SetForwardOverride(sp, lid, other); err != nil {
		lf.tb.Fatal(err)
	}
	return locFault{kind: faultDiverge, truth: truth, what: fmt.Sprintf("%s: LID %d (%s) out of %d, LFT %d", sp, lid, leaf, other, programmed),
		repair: func() { lf.f.ClearForwardOverrides(sp) }}
}

// locOutcome is what one scheme made of one trial.
type locOutcome struct {
	top1, top3  bool // after the last interval
	blamed      bool // blamed some link at some interval (a fault-free trial: wrongly)
	firstRight  int  // the interval at which the right link was first blamed (0: never)
	wrongBlames int  // wrong links blamed, summed over the intervals
}

// locTally sums outcomes per fault kind.
type locTally struct {
	trials, top1, top3, blamed, wrong int
	intervals                         []int // firstRight of the trials that got it
}

func (t *locTally) add(o locOutcome) {
	t.trials++
	if o.top1 {
		t.top1++
	}
	if o.top3 {
		t.top3++
	}
	if o.blamed {
		t.blamed++
	}
	t.wrong += o.wrongBlames
	if o.firstRight > 0 {
		t.intervals = append(t.intervals, o.firstRight)
	}
}

func (t *locTally) intervalsText() string {
	if len(t.intervals) == 0 {
		return "-"
	}
	hist := map[int]int{}
	worst := 0
	for _, i := range t.intervals {
		hist[i]++
		worst = max(worst, i)
	}
	var parts []string
	for i := 1; i <= worst; i++ {
		parts = append(parts, fmt.Sprintf("%d:%d", i, hist[i]))
	}
	return strings.Join(parts, " ")
}

// locScheme ranks the links of the fleet's evidence (every link with a
// score above 0, best first) and says which it blames, best first.
type locScheme struct {
	name   string
	rank   func(ev map[localize.Link]*fleetLinkEvidence) []localize.Link
	blamed func(ev map[localize.Link]*fleetLinkEvidence, ranked []localize.Link) []localize.Link
}

// evaluate scores one trial's intervals: top-1 and top-3 after the last
// one (top-1 only if blamed), the first interval whose top blamed link
// is right, and the wrong links blamed over all intervals.
func evaluate(s locScheme, truth map[localize.Link]bool, intervals []map[localize.Link]*fleetLinkEvidence) locOutcome {
	var o locOutcome
	for i, ev := range intervals {
		ranked := s.rank(ev)
		blamed := s.blamed(ev, ranked)
		last := i == len(intervals)-1
		if last {
			for k := 0; k < len(ranked) && k < 3; k++ {
				o.top3 = o.top3 || truth[ranked[k]]
			}
		}
		if len(blamed) == 0 {
			continue
		}
		o.blamed = true
		if truth[blamed[0]] && o.firstRight == 0 {
			o.firstRight = i + 1
		}
		for _, l := range blamed {
			if !truth[l] {
				o.wrongBlames++
			}
		}
		if last {
			o.top1 = truth[blamed[0]]
		}
	}
	return o
}

// TestFleetLocalization runs trials of one fault each on a fleet of 64
// exporters on a fat tree of 128 hosts, and compares the fleet verdict
// (the recording rules' score, rules_test.go mirrors them)
// with 007's plain votes on the same evidence. By default one trial per
// kind, which must localize; -loc.trials=20 -v prints the table.
func TestFleetLocalization(t *testing.T) {
	if testing.Short() {
		t.Skip("fleet simulation")
	}
	trials := *locTrials
	if trials == 0 {
		trials = locQuickTrial
	}
	params, ok := locScales[*locScale]
	if !ok {
		t.Fatalf("-loc.scale=%q: want \"\", 1k or 10k", *locScale)
	}
	built := time.Now()
	lf := newLocFleet(t, params)
	ctx := context.Background()
	lf.start(ctx)
	t.Logf("fleet built and started (%d intervals) in %v", lf.rounds, time.Since(built).Round(time.Second))
	rng := rand.New(rand.NewPCG(21, 7))
	schemes := []locScheme{fleetVerdict, vote007}
	tallies := map[string]map[string]*locTally{}
	for _, s := range schemes {
		tallies[s.name] = map[string]*locTally{}
		for _, k := range locKinds {
			tallies[s.name][k] = &locTally{}
		}
	}
	start := time.Now()
	for n := 0; n < trials; n++ {
		for _, kind := range locKinds {
			st := newFleetState(len(lf.exps))
			// Before the fault, two intervals: the first lets the counters
			// of the last trial's fault settle (a link taken down and back
			// up rose its LinkDowned), the second gives the paths and
			// counter readings to compare with.
			for r := 0; r < 2; r++ {
				st.observe(lf.round(ctx))
			}
			fault := lf.inject(kind, rng)
			var intervals []map[localize.Link]*fleetLinkEvidence
			for r := 0; r < locRounds; r++ {
				intervals = append(intervals, st.observe(lf.round(ctx)))
			}
			fault.repair()
			if n == 0 && len(lf.exps) <= locFleetParams.exporters {
				checkRulesAgree(t, st, intervals[len(intervals)-1], kind)
			}
			if testing.Verbose() {
				o := evaluate(fleetVerdict, fault.truth, intervals)
				t.Logf("trial %d %s %s: fleet verdict right first at interval %d (0: never), wrong links %d: evidence %s",
					n, kind, fault.what, o.firstRight, o.wrongBlames, fingerprint(intervals))
			}
			for _, s := range schemes {
				o := evaluate(s, fault.truth, intervals)
				tallies[s.name][kind].add(o)
				if testing.Verbose() && kind == faultNone && o.blamed {
					for i, ev := range intervals {
						for _, l := range s.blamed(ev, s.rank(ev)) {
							e := ev[l]
							t.Logf("trial %d none: %s: interval %d blames %s (paths %.0f bad %.0f suspicion %.2f votes %.2f causes %v)",
								n, s.name, i+1, describeKeys(lf, []localize.Link{l}, 1), e.paths, e.bad, e.suspicion, e.votes, e.causes)
						}
					}
				}
				if testing.Verbose() && kind != faultNone && !o.top1 {
					top := s.rank(intervals[len(intervals)-1])
					var why string
					if len(top) > 0 {
						e := intervals[len(intervals)-1][top[0]]
						why = fmt.Sprintf(" (paths %.0f bad %.0f suspicion %.2f votes %.2f causes %v)", e.paths, e.bad, e.suspicion, e.votes, e.causes)
					}
					t.Logf("trial %d %s %s: %s: top %v%s", n, kind, fault.what, s.name, describeKeys(lf, top, 3), why)
				}
			}
		}
	}
	t.Logf("%d trials per kind, %d exporters x %d destinations, %v", trials, len(lf.exps), lf.p.sample, time.Since(start).Round(time.Second))
	t.Log("\n" + locTable(schemes, tallies))
	ours := tallies[fleetVerdict.name]
	if *locScale != "" {
		checkScaleTargets(t, ours)
		return
	}
	right, all := 0, 0
	for _, k := range locKinds {
		tl := ours[k]
		if k == faultNone {
			if tl.blamed > 0 {
				t.Errorf("fleet verdict: blamed a link in %d of %d fault-free trials", tl.blamed, tl.trials)
			}
			continue
		}
		right += tl.top1
		all += tl.trials
		for _, i := range tl.intervals {
			if i > 2 {
				t.Errorf("fleet verdict: %s: the right link first blamed after %d intervals, want at most 2", k, i)
			}
		}
	}
	if float64(right) < 0.95*float64(all) {
		t.Errorf("fleet verdict: top-1 right in %d of %d trials, want at least 95%%", right, all)
	}
}

// fingerprint is a digest of a trial's evidence, interval by interval:
// equal in two runs when they saw the same paths, losses and counters
// (the fabric's drop decisions do not depend on goroutine order).
func fingerprint(intervals []map[localize.Link]*fleetLinkEvidence) string {
	h := fnv.New64a()
	for i, ev := range intervals {
		keys := make([]localize.Link, 0, len(ev))
		for l := range ev {
			keys = append(keys, l)
		}
		sort.Slice(keys, func(a, b int) bool { return fmt.Sprint(keys[a]) < fmt.Sprint(keys[b]) })
		for _, l := range keys {
			e := ev[l]
			fmt.Fprintf(h, "%d %v %g %g %.6f %g;", i, l, e.paths, e.bad, e.suspicion, e.votes)
		}
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

func describeKeys(lf *locFleet, keys []localize.Link, n int) string {
	var s []string
	for i, k := range keys {
		if i == n {
			break
		}
		a, b := lf.f.NodeByGUID(k.NodeGUID), lf.f.NodeByGUID(k.RemoteNodeGUID)
		s = append(s, fmt.Sprintf("%s[%d]-%s[%d]", a.Name, k.Port, b.Name, k.RemotePort))
	}
	return strings.Join(s, ", ")
}

// locTable is the evaluation's table: per scheme and fault kind.
func locTable(schemes []locScheme, tallies map[string]map[string]*locTally) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-14s %-10s %6s %7s %7s %12s %s\n", "scheme", "fault", "trials", "top-1", "top-3", "blamed/wrong", "intervals to the first right blame: trials")
	for _, s := range schemes {
		sum := locTally{}
		for _, k := range locKinds {
			tl := tallies[s.name][k]
			fmt.Fprintf(&b, "%-14s %-10s %6d %6.1f%% %6.1f%% %5d/%-6d %s\n", s.name, k, tl.trials,
				pct(tl.top1, tl.trials), pct(tl.top3, tl.trials), tl.blamed, tl.wrong, tl.intervalsText())
			if k != faultNone {
				sum.trials += tl.trials
				sum.top1 += tl.top1
				sum.top3 += tl.top3
			}
		}
		fmt.Fprintf(&b, "%-14s %-10s %6d %6.1f%% %6.1f%%\n", s.name, "all faults", sum.trials, pct(sum.top1, sum.trials), pct(sum.top3, sum.trials))
	}
	return b.String()
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// locWithin is the target at scale: the right link first in the
// fleet verdict within this many intervals, in at least 95 % of trials.
var locWithin = map[string]int{faultDrop: 3, faultDead: 2, faultDiverge: 2, faultWidth: 2, faultCongest: 2}

// checkScaleTargets checks the fleet verdict of a fleet at scale against
// the targets of docs/architecture.md ("Load on one switch"): per fault
// kind, the right link first within locWithin intervals in 95 % of the
// trials, and a healthy fabric blames nothing.
func checkScaleTargets(t *testing.T, ours map[string]*locTally) {
	t.Helper()
	for _, k := range locKinds {
		tl := ours[k]
		if k == faultNone {
			if tl.blamed > 0 {
				t.Errorf("fleet verdict: blamed a link in %d of %d fault-free trials", tl.blamed, tl.trials)
			}
			continue
		}
		in := 0
		for _, i := range tl.intervals {
			if i <= locWithin[k] {
				in++
			}
		}
		t.Logf("fleet verdict: %s: right link first within %d intervals in %d of %d trials (%.1f%%)", k, locWithin[k], in, tl.trials, pct(in, tl.trials))
		if float64(in) < 0.95*float64(tl.trials) {
			t.Errorf("fleet verdict: %s: right within %d intervals in %d of %d trials, want at least 95%%", k, locWithin[k], in, tl.trials)
		}
	}
}
