package collector

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ibtracer/ibtracer_exporter/collector/config"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

func mustConfig(t *testing.T, yml string) *config.Config {
	t.Helper()
	c, err := config.Parse("test.yml", []byte(yml))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A recorded result, built by hand, against literal exposition text.
func TestDestinationSeriesExposition(t *testing.T) {
	e := New(log.NewNopLogger(), "seed")
	defer e.Stop()
	c := mustConfig(t, `
interval: 1h
destinations:
  - name: db01
    lid: 9
    labels: {rack: r7}
  - name: idle
    lid: 10
`)
	e.Apply(c)
	start := time.Unix(1800000000, 0)
	hop := func(i int, guid ibmad.GUID, typ ibmad.NodeType, desc string, lid uint16, in, out uint8, st trace.AgentStatus) trace.Hop {
		return trace.Hop{Hop: i, NodeGUID: guid, PortGUID: guid + 1, NodeType: typ, NodeDesc: desc, LID: lid, InPort: in,
			OutPort: out, Agent: st, RTT: 2 * time.Microsecond, AgentRTT: 0}
	}
	r1 := &trace.Result{Status: trace.StatusOK, Start: start, Duration: 3 * time.Millisecond, MADs: 12, DLID: 9,
		Hops: []trace.Hop{hop(0, 0x10, ibmad.NodeTypeCA, "me", 1, 0, 1, trace.AgentSource),
			hop(1, 0x20, ibmad.NodeTypeSwitch, "leaf", 2, 1, 4, trace.AgentUnsupported),
			hop(2, 0x30, ibmad.NodeTypeCA, "db01", 9, 1, 0, trace.AgentValidated)}}
	r1.Hops[2].AgentRTT, r1.Hops[2].ValidatedBy = 7*time.Microsecond, trace.ByAgent
	r1.Hops[2].ActualInPort, r1.Hops[2].ExpectedInPort = 1, 1
	e.dests.get("db01").record(r1)
	// The path moves to another leaf port: a path change.
	r2 := *r1
	r2.Hops = append([]trace.Hop(nil), r1.Hops...)
	r2.Hops[1].OutPort = 5
	r2.Start = start.Add(time.Minute)
	e.dests.get("db01").record(&r2)

	want := `
# HELP ibtracer_path_changes_total Times the traced path (nodes and ports) changed.
# TYPE ibtracer_path_changes_total counter
ibtracer_path_changes_total{dest="db01",rack="r7"} 1
ibtracer_path_changes_total{dest="idle",rack=""} 0
# HELP ibtracer_path_hops Links the last traced path crosses: the nodes after the source, destination included.
# TYPE ibtracer_path_hops gauge
ibtracer_path_hops{dest="db01",rack="r7"} 2
ibtracer_path_hops{dest="idle",rack=""} 0
# HELP ibtracer_path_last_change_timestamp_seconds When the path last changed (0: never).
# TYPE ibtracer_path_last_change_timestamp_seconds gauge
ibtracer_path_last_change_timestamp_seconds{dest="db01",rack="r7"} 1.800000060003e+09
ibtracer_path_last_change_timestamp_seconds{dest="idle",rack=""} 0
# HELP ibtracer_path_validated_hops Hops of the last trace whose ingress port was confirmed over the traced path's link into them, by the agent or the SMA.
# TYPE ibtracer_path_validated_hops gauge
ibtracer_path_validated_hops{dest="db01",rack="r7"} 1
ibtracer_path_validated_hops{dest="idle",rack=""} 0
# HELP ibtracer_path_unsupported_hops Hops of the last trace nobody validated: unsupported (no agent, the SMA not asked) or lost (no answer).
# TYPE ibtracer_path_unsupported_hops gauge
ibtracer_path_unsupported_hops{dest="db01",rack="r7"} 1
ibtracer_path_unsupported_hops{dest="idle",rack=""} 0
# HELP ibtracer_unsupported_hops_total Hops nobody validated (unsupported or lost), summed over traces.
# TYPE ibtracer_unsupported_hops_total counter
ibtracer_unsupported_hops_total{dest="db01",rack="r7"} 2
ibtracer_unsupported_hops_total{dest="idle",rack=""} 0
# HELP ibtracer_trace_success 1 if the last trace reached the destination and found no port mismatch.
# TYPE ibtracer_trace_success gauge
ibtracer_trace_success{dest="db01",rack="r7"} 1
ibtracer_trace_success{dest="idle",rack=""} 0
# HELP ibtracer_hop_info The last traced path, one series per hop.
# TYPE ibtracer_hop_info gauge
ibtracer_hop_info{dest="db01",hop="1",in_port="1",lid="2",node_desc="leaf",node_guid="0x0000000000000020",node_type="switch",out_port="5",port_guid="0x0000000000000021",rack="r7"} 1
ibtracer_hop_info{dest="db01",hop="2",in_port="1",lid="9",node_desc="db01",node_guid="0x0000000000000030",node_type="ca",out_port="0",port_guid="0x0000000000000031",rack="r7"} 1
# HELP ibtracer_trace_mads_total MADs spent tracing the destination.
# TYPE ibtracer_trace_mads_total counter
ibtracer_trace_mads_total{dest="db01",rack="r7"} 24
ibtracer_trace_mads_total{dest="idle",rack=""} 0
`
	if err := testutil.CollectAndCompare(e, strings.NewReader(want), "ibtracer_path_changes_total", "ibtracer_path_hops",
		"ibtracer_path_last_change_timestamp_seconds", "ibtracer_path_validated_hops", "ibtracer_path_unsupported_hops",
		"ibtracer_unsupported_hops_total", "ibtracer_trace_success", "ibtracer_hop_info", "ibtracer_trace_mads_total"); err != nil {
		t.Fatal(err)
	}
	// Failure reasons appear once they occurred; the traces by result and
	// the histograms are the exporter's, not the destinations'.
	wantResults := `
# HELP ibtracer_traces_total Traces of all destinations together, by result.
# TYPE ibtracer_traces_total counter
ibtracer_traces_total{result="left_subnet"} 0
ibtracer_traces_total{result="mismatch"} 0
ibtracer_traces_total{result="ok"} 2
ibtracer_traces_total{result="resolve_failed"} 0
ibtracer_traces_total{result="too_long"} 0
ibtracer_traces_total{result="unreachable"} 0
`
	if err := testutil.CollectAndCompare(e, strings.NewReader(wantResults), "ibtracer_traces_total", "ibtracer_trace_failures_total"); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(e, "ibtracer_latency_seconds"); n != 1 {
		t.Fatalf("%d latency histograms, want one for the exporter", n)
	}
	wantLast := `
# HELP ibtracer_last_latency_seconds Round-trip time of the validation MAD to the destination's own agent (never its SMA), from the last trace that measured it (0: none yet).
# TYPE ibtracer_last_latency_seconds gauge
ibtracer_last_latency_seconds{dest="db01",rack="r7"} 7e-06
ibtracer_last_latency_seconds{dest="idle",rack=""} 0
# HELP ibtracer_last_trace_duration_seconds How long the last trace took (0: none yet).
# TYPE ibtracer_last_trace_duration_seconds gauge
ibtracer_last_trace_duration_seconds{dest="db01",rack="r7"} 0.003
ibtracer_last_trace_duration_seconds{dest="idle",rack=""} 0
`
	if err := testutil.CollectAndCompare(e, strings.NewReader(wantLast), "ibtracer_last_latency_seconds", "ibtracer_last_trace_duration_seconds"); err != nil {
		t.Fatal(err)
	}
	if problems, err := testutil.CollectAndLint(e); err != nil || len(problems) != 0 {
		t.Fatalf("lint: %v %v", err, problems)
	}
}

func TestReloadAddsAndRemovesSeries(t *testing.T) {
	e := New(log.NewNopLogger(), "seed")
	defer e.Stop()
	e.Apply(mustConfig(t, "interval: 1h\ndestinations:\n  - {name: a, lid: 3}\n  - {name: b, lid: 4}\n"))
	e.dests.get("a").record(&trace.Result{Status: trace.StatusOK, Start: time.Now()})
	keep := e.dests.get("a")
	e.Apply(mustConfig(t, "interval: 1h\ndestinations:\n  - {name: a, lid: 3}\n  - {name: c, node: x}\n"))
	if e.dests.get("a") != keep {
		t.Fatal("an unchanged destination lost its state")
	}
	want := `
# HELP ibtracer_trace_success 1 if the last trace reached the destination and found no port mismatch.
# TYPE ibtracer_trace_success gauge
ibtracer_trace_success{dest="a"} 1
ibtracer_trace_success{dest="c"} 0
`
	if err := testutil.CollectAndCompare(e, strings.NewReader(want), "ibtracer_trace_success"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-keep.done:
		t.Fatal("the kept destination was stopped")
	default:
	}
}

func TestPhaseIsDeterministicAndSpread(t *testing.T) {
	iv := time.Minute
	if a, b := phase("0x1", "db01", iv), phase("0x1", "db01", iv); a != b {
		t.Fatal("not deterministic")
	}
	seen := map[time.Duration]bool{}
	for i := 0; i < 50; i++ {
		p := phase("exporter-"+string(rune('a'+i)), "db01", iv)
		if p < 0 || p >= iv {
			t.Fatalf("phase %v outside the interval", p)
		}
		seen[p.Truncate(time.Second)] = true
	}
	if len(seen) < 25 {
		t.Fatalf("50 exporters share only %d distinct seconds of phase", len(seen))
	}
	now := time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC)
	if got := nextRun(now, iv, 30*time.Second); !got.Equal(now.Add(20 * time.Second)) {
		t.Fatalf("next %v", got)
	}
	if got := nextRun(now, iv, 5*time.Second); !got.Equal(now.Add(55 * time.Second)) {
		t.Fatalf("next %v", got)
	}
}

// TestSchedulerOnSim: every destination is traced on its interval, a dead
// destination does not delay the others, and traces of one destination
// never overlap.
func TestSchedulerOnSim(t *testing.T) {
	topo, _ := sim.FatTree2(2, 2, 3, 1)
	f, _ := sim.New(topo, sim.Options{})
	agentsBut(t, f, "H0-0")       // health_test.go
	_ = f.SetSilent("H1-2", true) // dead: its traces time out
	tr, _ := f.Attach("H0-0", 0)
	eng := ibmad.NewEngine(tr, ibmad.Options{})
	defer eng.Close()
	e := New(log.NewNopLogger(), "x")
	defer e.Stop()
	// Traces in flight per destination, and the most seen at once.
	var (
		flightMu sync.Mutex
		inFlight = map[string]int{}
		most     = map[string]int{}
	)
	e.onTrace(func(name string, _ time.Time) {
		flightMu.Lock()
		inFlight[name]++
		most[name] = max(most[name], inFlight[name])
		flightMu.Unlock()
	}, nil)
	e.onTrace(nil, func(name string) {
		flightMu.Lock()
		inFlight[name]--
		flightMu.Unlock()
	})
	e.SetDevice(eng, nil, nil)
	l := func(n string) string { v, _ := f.LIDOf(n, 0); return strconv.Itoa(int(v)) }
	e.Apply(mustConfig(t, `
interval: 1s
timeout: 400ms
retries: 2
concurrency: 2
destinations:
  - {name: a, lid: `+l("H0-1")+`}
  - {name: b, lid: `+l("H1-0")+`}
  - {name: dead, lid: `+l("H1-2")+`}
`))
	count := func(name string) uint64 {
		s := e.dests.get(name)
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.traces
	}
	// a and b keep their 1 s rhythm while dead's traces time out.
	start := time.Now()
	for count("a") < 3 || count("b") < 3 || count("dead") < 1 {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("after %v at a 1 s interval: a traced %d times, b %d, dead %d", time.Since(start), count("a"), count("b"), count("dead"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if took := time.Since(start); took > 6*time.Second {
		t.Fatalf("three traces of a and b took %v: the dead destination delayed them", took)
	}
	// dead's traces last their whole interval (three 400 ms attempts, cut
	// at 1 s): were the next one started on time, they would overlap.
	for count("dead") < 3 {
		if time.Since(start) > 30*time.Second {
			t.Fatalf("dead traced only %d times in %v", count("dead"), time.Since(start))
		}
		time.Sleep(50 * time.Millisecond)
	}
	flightMu.Lock()
	for _, name := range []string{"a", "b", "dead"} {
		if most[name] != 1 {
			t.Errorf("%s: %d traces ran at once", name, most[name])
		}
	}
	flightMu.Unlock()
	s := e.dests.get("dead")
	s.mu.Lock()
	st := s.last.Status
	s.mu.Unlock()
	if st != trace.StatusUnreachable {
		t.Fatalf("dead: %s", st)
	}
}

func configParse(yml string) (*config.Config, error) { return config.Parse("test.yml", []byte(yml)) }
