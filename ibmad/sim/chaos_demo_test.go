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

// The make run demo (the demo fabric with agents on 80% of the hosts and
// on no switch, as on a real fabric; examples/demo.yml, validated as the
// exporter does, validate: auto; the chaos schedule) shows within its
// first minutes the verdicts of both validators, among them a status-7
// mismatch found by a switch's SMA (the diverging-switch fault), and a
// path change: the chaos schedule runs with a simulated clock, and every
// destination is traced once per interval of it, as the exporter does.
// Its destination in the subnet behind the router (--sim.remote-subnet)
// leaves the subnet there, and the remote SA shows the rest; its
// multicast destination (mlid:, the group make run programs with
// --sim.multicast) follows the group's tree to its member.
func TestChaosDemoShowsEveryVerdict(t *testing.T) {
	const limit = 4 * time.Minute // of simulated time
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			first, faults := runDemo(t, seed, limit)
			for _, v := range []seen{{trace.AgentValidated, trace.ByAgent}, {trace.AgentValidated, trace.BySMA},
				{trace.AgentMismatch, trace.BySMA}, {trace.AgentIngressUnknown, trace.BySMA}, pathChange, leftSubnet, multicastOK} {
				if _, ok := first[v]; !ok {
					t.Errorf("no %s hop by %s within %v; first seen: %v; faults: %s", v.verdict, v.by, limit, first, strings.Join(faults, "; "))
				}
			}
			// A muted agent is replaced by the SMA under auto, and the lossy
			// link's MADs are retried: a lost hop shows only with some seeds.
			t.Logf("a lost hop seen: %v", firstLost(first))
			for v := range first {
				if v.by == trace.BySMA || v == pathChange || v == leftSubnet || v == multicastOK {
					continue
				}
				if v.verdict != trace.AgentSource && v.by != trace.ByAgent || v.verdict == trace.AgentUnsupported {
					t.Errorf("%s by %q: under auto every hop but the source is judged by an agent or an SMA", v.verdict, v.by)
				}
			}
			t.Logf("first seen: %v", first)
		})
	}
}

// seen is a verdict and who gave it.
type seen struct {
	verdict trace.AgentStatus
	by      trace.Validator
}

func (s seen) String() string { return fmt.Sprintf("%s/%s", s.verdict, s.by) }

// pathChange marks, among the verdicts first seen, the first path change;
// leftSubnet the first trace that left the subnet at the router and
// heard the remote subnet's SA.
var (
	pathChange = seen{verdict: "(path change)"}
	leftSubnet = seen{verdict: "(left the subnet)"}
	// multicastOK: the first multicast trace that reached its member.
	multicastOK = seen{verdict: "(multicast path)"}
)

// firstLost says whether a hop was lost, whoever was asked.
func firstLost(first map[seen]time.Duration) bool {
	_, a := first[seen{trace.AgentLost, trace.ByAgent}]
	_, s := first[seen{trace.AgentLost, trace.BySMA}]
	return a || s
}

func runDemo(t *testing.T, seed uint64, limit time.Duration) (map[seen]time.Duration, []string) {
	o, err := (&ibopen.Config{Transport: "sim", SimAgents: "hosts:80%", SimSeed: 1, SimRemoteSubnet: true,
		SimMulticast: []string{"0xc001:H0-0,H1-2,H3-3"}}).Open(true) // as make run
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
	opts := c.TraceOptions() // as the exporter: validate: auto
	opts.Clock = clock
	tr := trace.New(eng, opts)

	first := map[seen]time.Duration{}
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
				if d.Multicast() { // as the exporter traces mlid: (collector/destination.go)
					r := tr.TraceMulticast(ctx, d.MLID, 0, d.LID)
					if _, ok := first[multicastOK]; !ok && r.Status == trace.StatusOK && len(r.Hops) > 1 {
						first[multicastOK] = elapsed
					}
					continue
				}
				r := tr.Trace(ctx, d.Target())
				if _, ok := first[leftSubnet]; !ok && r.Status == trace.StatusLeftSubnet && r.Beyond.Remote != nil {
					first[leftSubnet] = elapsed
				}
				if r.Status.Walked() {
					if sig, ok := paths[d.Name]; ok && sig != r.Signature() {
						if _, ok := first[pathChange]; !ok {
							first[pathChange] = elapsed
						}
					}
					paths[d.Name] = r.Signature()
				}
				completed := r.Status.Walked()
				for _, h := range r.Hops {
					if h.Agent == trace.AgentNotAsked && !completed {
						continue // a failed trace asks no one after it fails: not a verdict
					}
					if v := (seen{h.Agent, h.ValidatedBy}); first[v] == 0 && h.Agent != "" {
						first[v] = elapsed
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
