package sim

import (
	"context"
	"math/rand/v2"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// chaosFabric is the fabric the chaos tests run on: 4 leaves, 2 spines,
// 4 hosts a leaf, 2 cables a leaf-spine pair; seed 1.
func chaosFabric(t *testing.T) *Fabric {
	t.Helper()
	topo, err := FatTree2(4, 2, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(topo, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// broken lists the faults in force on f.
func broken(f *Fabric) []string {
	var out []string
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, n := range f.Nodes() {
		if len(n.override) > 0 {
			out = append(out, n.Name+" diverges")
		}
		if n.hideIn.Load() {
			out = append(out, n.Name+" hides the ingress")
		}
		if n.muteAgents.Load() {
			out = append(out, n.Name+" mute")
		}
		for _, p := range n.Ports {
			if p == nil {
				continue
			}
			if p.dropPPM.Load() != 0 {
				out = append(out, n.Name+" lossy")
			}
			if p.Remote != nil && p.State != ibmad.PortStateActive {
				out = append(out, n.Name+" down")
			}
		}
	}
	return out
}

func TestChaosSchedule(t *testing.T) {
	f := chaosFabric(t)
	if b := broken(f); len(b) != 0 {
		t.Fatalf("a new fabric has faults: %v", b)
	}
	var clock time.Duration
	waits := 0
	wait := func(ctx context.Context, d time.Duration) bool {
		if d < 0 {
			t.Fatalf("negative wait %v", d)
		}
		if waits == 200 {
			return false
		}
		waits++
		clock += d
		return true
	}
	type event struct {
		at  time.Duration
		msg string
	}
	var events []event
	var lastFault time.Duration
	faults, repairs, inForce := 0, 0, 0
	kinds := map[string]int{}
	logf := func(msg string, kv ...any) {
		events = append(events, event{clock, msg})
		switch {
		case strings.HasPrefix(msg, "sim fault repaired"):
			repairs++
			inForce--
		case strings.HasPrefix(msg, "sim fault:"):
			if gap := clock - lastFault; faults == 0 && (gap < chaosFirst || gap > chaosFirst+chaosGapSpread/2*time.Second) {
				t.Errorf("first fault at %v: want %v + up to %ds", clock, chaosFirst, chaosGapSpread/2)
			} else if faults > 0 && (gap < chaosMinGap || gap > chaosMinGap+chaosGapSpread*time.Second) {
				t.Errorf("fault at %v, %v after the previous one: want %v + up to %ds", clock, gap, chaosMinGap, chaosGapSpread)
			}
			kinds[msg]++
			lastFault = clock
			faults++
			inForce++
			if len(broken(f)) == 0 {
				t.Errorf("%s at %v: the fabric shows no fault", msg, clock)
			}
		}
	}
	f.Chaos(context.Background(), ChaosOptions{Rand: rand.New(rand.NewPCG(3, 4)), Log: logf, Wait: wait})
	if faults < 50 || repairs != faults {
		t.Fatalf("%d faults, %d repairs over %v of simulated time", faults, repairs, clock)
	}
	if b := broken(f); len(b) != 0 {
		t.Fatalf("after Chaos returned: still broken: %v", b)
	}
	// Every kind, round and round.
	if len(kinds) != faultKinds {
		t.Errorf("fault kinds injected: %v, want %d kinds", kinds, faultKinds)
	}
	for k, n := range kinds {
		if n < faults/faultKinds-1 {
			t.Errorf("%q injected %d times of %d faults: the kinds do not take turns", k, n, faults)
		}
	}
	// Each repair comes its fault's duration after it (no fault was
	// repaired early, none lasts for ever).
	for i, e := range events {
		if !strings.HasPrefix(e.msg, "sim fault repaired:") {
			continue
		}
		ok := false
		for _, p := range events[:i] {
			d := e.at - p.at
			if strings.HasPrefix(p.msg, "sim fault:") && (d == chaosLossy || d == chaosLinkDown || d == chaosDivergence ||
				d == chaosIngressHide || d == chaosAgentMute) {
				ok = true
			}
		}
		if !ok {
			t.Errorf("repair %q at %v matches no fault a fault's duration earlier", e.msg, e.at)
		}
	}
}

func TestChaosStopsWithItsContext(t *testing.T) {
	f := chaosFabric(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.Chaos(ctx, ChaosOptions{}); close(done) }()
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Chaos did not return within 10s of its context ending")
	}
}

// TestChaosFaultsOutlastTheRules: each fault of make run's --sim.faults
// that a shipped alert watches lasts its for: plus a minute (a scrape,
// an evaluation and the exporter's interval), so that the demo shows the
// alert fire: a diverging switch IBTracerPortMismatch, a link down
// IBTracerPathChanged (no for:), a lossy link IBTracerLinkSuspected, a
// silent agent IBTracerAgentMissing.
func TestChaosFaultsOutlastTheRules(t *testing.T) {
	b, err := os.ReadFile("../../dashboards/ibtracer.rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	for alert, fault := range map[string]time.Duration{
		"IBTracerPortMismatch":  chaosDivergence,
		"IBTracerPathChanged":   chaosLinkDown,
		"IBTracerLinkSuspected": chaosLossy,
		"IBTracerAgentMissing":  chaosAgentMute,
	} {
		m := regexp.MustCompile(`(?s)- alert: ` + alert + `\n.*?(?:\n      - (?:alert|record): |\z)`).Find(b)
		if m == nil {
			t.Fatalf("no rule %s in the rules", alert)
		}
		var forDur time.Duration
		if f := regexp.MustCompile(`(?m)^        for: (\S+)$`).FindSubmatch(m); f != nil {
			if forDur, err = time.ParseDuration(string(f[1])); err != nil {
				t.Fatal(err)
			}
		}
		if fault < forDur+time.Minute {
			t.Errorf("%s: the fault lasts %v, the alert's for: is %v: it never fires in the demo", alert, fault, forDur)
		}
	}
}

// TestChaosHealthFaults: Chaos puts the standing health faults in force
// for its whole run and repairs them when it ends.
func TestChaosHealthFaults(t *testing.T) {
	f := chaosFabric(t)
	var logged []string
	inForce := map[string]bool{}
	waits := 0
	wait := func(ctx context.Context, d time.Duration) bool {
		if waits == 0 {
			for _, n := range f.Nodes() {
				for _, p := range n.Ports {
					if p != nil && p.training.Load() != nil {
						inForce["training"] = true
					}
					if p != nil && p.ctr.climb.Load() != nil {
						inForce["climb"] = true
					}
				}
			}
		}
		waits++
		return waits < 3
	}
	f.Chaos(context.Background(), ChaosOptions{Rand: rand.New(rand.NewPCG(1, 2)), Wait: wait,
		Log: func(msg string, kv ...any) { logged = append(logged, msg) }})
	all := strings.Join(logged, "\n")
	if !inForce["training"] || !inForce["climb"] || strings.Count(all, "sim health fault:") != 3 {
		t.Fatalf("in force %v, logged:\n%s", inForce, all)
	}
	for _, n := range f.Nodes() {
		for _, p := range n.Ports {
			if p != nil && (p.training.Load() != nil || p.ctr.climb.Load() != nil) {
				t.Fatalf("%s[%d] still faulted after Chaos", n.Name, p.Num)
			}
		}
	}
}
