package collector

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// TestDiscoveryKeyTakesEffectOnReload: the discovery key reaches the
// tracer at Apply (a reload), and ibtracer_discovery_mode shows it.
func TestDiscoveryKeyTakesEffectOnReload(t *testing.T) {
	_, eng := simAt(t, 2, 2, 2)
	e := New(log.NewNopLogger(), "seed")
	defer e.Stop()
	e.SetDevice(eng, nil, nil)
	mode := func(want string) {
		t.Helper()
		exp := `
# HELP ibtracer_discovery_mode 1 for how the next trace learns its path: smp (directed-route SMPs) or sa (SA records only; with discovery: auto, after SMPs were refused at the first hop).
# TYPE ibtracer_discovery_mode gauge
ibtracer_discovery_mode{mode="sa"} ` + map[bool]string{true: "1", false: "0"}[want == "sa"] + `
ibtracer_discovery_mode{mode="smp"} ` + map[bool]string{true: "1", false: "0"}[want == "smp"] + `
`
		if err := testutil.CollectAndCompare(e, strings.NewReader(exp), "ibtracer_discovery_mode"); err != nil {
			t.Fatal(err)
		}
	}
	e.Apply(mustConfig(t, "interval: 1h\ndiscovery: sa\n"))
	mode("sa")
	e.Apply(mustConfig(t, "interval: 1h\ndiscovery: smp\n"))
	mode("smp")
	e.Apply(mustConfig(t, "interval: 1h\n")) // auto: SMPs until they are refused
	mode("smp")
	e.modes.add(&trace.Result{Discovery: trace.DiscoverySA, SARequests: 7})
	e.modes.add(&trace.Result{Discovery: trace.DiscoverySMP})
	want := `
# HELP ibtracer_sa_record_requests_total SA record requests (NodeRecord, LinkRecord, PortInfoRecord, LinearForwardingTableRecord) that SA-mode walks sent; records are shared across destinations for share_validation, so its rate is the SA load the tracing adds.
# TYPE ibtracer_sa_record_requests_total counter
ibtracer_sa_record_requests_total 7
# HELP ibtracer_discovery_traces_total Traces by how they learnt the path: smp or sa.
# TYPE ibtracer_discovery_traces_total counter
ibtracer_discovery_traces_total{mode="sa"} 1
ibtracer_discovery_traces_total{mode="smp"} 1
`
	if err := testutil.CollectAndCompare(e, strings.NewReader(want), "ibtracer_sa_record_requests_total", "ibtracer_discovery_traces_total"); err != nil {
		t.Fatal(err)
	}
}

// TestAutoFallbackShowsInTheMetrics: behind an SMP firewall, discovery:
// auto traces from the SA, and the metrics say so.
func TestAutoFallbackShowsInTheMetrics(t *testing.T) {
	topo, _ := sim.FatTree2(2, 2, 2, 1)
	f, _ := sim.New(topo, sim.Options{SMNode: "H1-1"})
	f.SetSMPFirewall(true)
	tp, _ := f.Attach("H0-0", 0)
	eng := ibmad.NewEngine(tp, ibmad.Options{})
	defer eng.Close()
	e := New(log.NewNopLogger(), "seed")
	defer e.Stop()
	e.SetDevice(eng, nil, nil)
	lid, _ := f.LIDOf("H1-0", 0)
	// No destinations in the applied configuration: no loop traces behind the test's back.
	e.Apply(mustConfig(t, "interval: 1h\ntimeout: 100ms\nretries: 0\nvalidate: false\n"))
	d := mustConfig(t, fmt.Sprintf("destinations:\n  - {name: d, lid: %d}\n", lid)).Destinations[0]
	s := newDestState(d, nil, e.dests.hists)
	e.traceOnce(context.Background(), s, time.Minute)
	if s.last == nil || s.last.Status != trace.StatusOK || s.last.Discovery != trace.DiscoverySA {
		t.Fatalf("auto behind the firewall: %+v", s.last)
	}
	want := fmt.Sprintf(`
# HELP ibtracer_discovery_mode 1 for how the next trace learns its path: smp (directed-route SMPs) or sa (SA records only; with discovery: auto, after SMPs were refused at the first hop).
# TYPE ibtracer_discovery_mode gauge
ibtracer_discovery_mode{mode="sa"} 1
ibtracer_discovery_mode{mode="smp"} 0
# HELP ibtracer_discovery_traces_total Traces by how they learnt the path: smp or sa.
# TYPE ibtracer_discovery_traces_total counter
ibtracer_discovery_traces_total{mode="sa"} 1
ibtracer_discovery_traces_total{mode="smp"} 0
# HELP ibtracer_sa_record_requests_total SA record requests (NodeRecord, LinkRecord, PortInfoRecord, LinearForwardingTableRecord) that SA-mode walks sent; records are shared across destinations for share_validation, so its rate is the SA load the tracing adds.
# TYPE ibtracer_sa_record_requests_total counter
ibtracer_sa_record_requests_total %d
`, s.last.SARequests)
	if err := testutil.CollectAndCompare(e, strings.NewReader(want), "ibtracer_discovery_mode", "ibtracer_discovery_traces_total",
		"ibtracer_sa_record_requests_total"); err != nil {
		t.Fatal(err)
	}
	if s.last.SARequests == 0 {
		t.Fatal("an SA-mode trace that asked the SA nothing")
	}
}

// TestSARecordsSharedForShareValidation: SA-mode records are shared for
// share_validation, like SMP-mode LFT blocks; 0 shares nothing.
func TestSARecordsSharedForShareValidation(t *testing.T) {
	f, eng := simAt(t, 2, 2, 2)
	e := New(log.NewNopLogger(), "seed")
	defer e.Stop()
	e.SetDevice(eng, nil, nil)
	lid, _ := f.LIDOf("H1-0", 0)
	d := mustConfig(t, fmt.Sprintf("destinations:\n  - {name: d, lid: %d}\n", lid)).Destinations[0]
	for _, tc := range []struct {
		share        string
		second       func(first, second int) bool
		wantDescribe string
	}{
		{"0s", func(a, b int) bool { return b == a && a > 0 }, "every trace asks every record"},
		{"10s", func(a, b int) bool { return b == 0 && a > 0 }, "the second trace asks nothing"},
	} {
		e.Apply(mustConfig(t, "interval: 1h\nvalidate: false\ndiscovery: sa\nshare_validation: "+tc.share+"\n"))
		s := newDestState(d, nil, e.dests.hists)
		e.traceOnce(context.Background(), s, time.Minute)
		first := s.last.SARequests
		e.traceOnce(context.Background(), s, time.Minute)
		if second := s.last.SARequests; s.last.Status != trace.StatusOK || !tc.second(first, second) {
			t.Fatalf("share_validation %s: %d then %d SA requests (%s); want: %s", tc.share, first, second, s.last.Status, tc.wantDescribe)
		}
	}
}
