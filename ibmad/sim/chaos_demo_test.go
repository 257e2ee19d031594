package sim_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/collector/config"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/internal/fakeclock"
	"github.com/ibtracer/ibtracer_exporter/internal/ibopen"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// The make run demo (the demo fabric with agents on 80% of the hosts,
// examples/demo.yml, the chaos schedule) shows every verdict within its
// first minutes, a status-7 mismatch included, and a path change: the chaos schedule runs
// with a simulated clock, and every destination is traced once per
// interval of it, as the exporter does.
func TestChaosDemoShowsEveryVerdict(t *testing.T) {
	const limit = 4 * time.Minute // of simulated time
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			first, faults := runDemo(t, seed, limit)
			for _, v := range []trace.AgentStatus{trace.AgentValidated, trace.AgentUnsupported, trace.AgentMismatch,
				trace.AgentLost, trace.AgentIngressUnknown, pathChange} {
				if _, ok := first[v]; !ok {
					t.Errorf("no %s hop within %v; first seen: %v; faults: %s", v, limit, first, strings.Join(faults, "; "))
				}
			}
			t.Logf("first seen: %v", first)
		})
	}
}

// pathChange marks, among the verdicts first seen, the first path change.
const pathChange trace.AgentStatus = "(path change)"

func runDemo(t *testing.T, seed uint64, limit time.Duration) (map[trace.AgentStatus]time.Duration, []string) {
	o, err := (&ibopen.Config{Transport: "sim", SimAgents: "80%", SimSeed: 1}).Open(true)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	c, err := config.Load("../../examples/demo.yml")
	if err != nil {
		t.Fatal(err)
	}
	eng := ibmad.NewEngine(o.Transport, ibmad.Options{})
	defer eng.Close()
	clock := fakeclock.New(time.Unix(1800000000, 0))
	tr := trace.New(eng, trace.Options{Timeout: time.Duration(c.Timeout), Retries: *c.Retries,
		ShareValidation: config.DefaultShareValidation, SupportTTL: config.DefaultAgentSupportTTL, Clock: clock})

	first := map[trace.AgentStatus]time.Duration{}
	paths := map[string]string{} // destination: signature of its last path
	var elapsed, untraced time.Duration
	step := time.Duration(c.Interval)
	var faults []string
	ctx := context.Background()
	wait := func(_ context.Context, d time.Duration) bool {
		untraced += d
		for untraced >= step && elapsed < limit {
			untraced -= step
			elapsed += step
			clock.Add(step)
			for _, d := range c.Destinations {
				r := tr.Trace(ctx, d.Target())
				if r.Status == trace.StatusOK || r.Status == trace.StatusMismatch {
					if sig, ok := paths[d.Name]; ok && sig != r.Signature() {
						if _, seen := first[pathChange]; !seen {
							first[pathChange] = elapsed
						}
					}
					paths[d.Name] = r.Signature()
				}
				for _, h := range r.Hops {
					if _, ok := first[h.Agent]; !ok && h.Agent != "" {
						first[h.Agent] = elapsed
					}
				}
			}
		}
		return elapsed < limit
	}
	logf := func(msg string, kv ...any) {
		at := elapsed + untraced
		if len(faults) == 0 && at > 30*time.Second {
			t.Errorf("first fault at %v of simulated time, want within 30s", at)
		}
		faults = append(faults, fmt.Sprintf("%v %s %v", at, msg, kv))
	}
	o.Fabric.Chaos(ctx, sim.ChaosOptions{Rand: rand.New(rand.NewPCG(seed, 7)), Log: logf, Wait: wait, Source: o.Node})
	return first, faults
}
