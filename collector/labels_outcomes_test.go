package collector

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/internal/memtest"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// What a destination keeps does not grow with the kinds of outcome it has
// seen: the label sets of a failure reason are built when a scrape asks
// for them, and the results are counted for all destinations together. Kept, they made the live heap of a
// soak with faults (scripts/soak.sh) grow for as long as the faults kept
// reaching new (destination, reason) pairs.
func TestOutcomesKeepNoLabelSets(t *testing.T) {
	const n = 1000
	var b strings.Builder
	b.WriteString("interval: 1h\ndestinations:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  - {name: d%04d, lid: %d, hops: false, labels: {rack: r%d}}\n", i+1, i+1, i%8)
	}
	e := New(log.NewNopLogger(), "")
	defer e.Stop()
	e.Apply(mustConfig(t, b.String()))
	dests := e.destinations()
	start := time.Unix(1800000000, 0)
	hops := []trace.Hop{{Hop: 0, NodeType: ibmad.NodeTypeCA, Agent: trace.AgentSource},
		{Hop: 1, NodeType: ibmad.NodeTypeCA, Agent: trace.AgentValidated, AgentRTT: 4 * time.Microsecond}}
	ok := &trace.Result{Status: trace.StatusOK, Start: start, Duration: time.Millisecond, Hops: hops}
	fail := func(st trace.Status, rs trace.Reason) *trace.Result {
		return &trace.Result{Status: st, Reason: rs, Start: start, Duration: time.Millisecond}
	}
	// Every destination has traced fine and failed once: what a first
	// failure allocates is allowed.
	first := fail(trace.StatusUnreachable, trace.ReasonTimeout)
	for _, s := range dests {
		s.record(ok)
		s.record(first)
	}
	var later []*trace.Result
	for _, rs := range allReasons {
		later = append(later, fail(trace.StatusUnreachable, rs))
	}
	later = append(later, fail(trace.StatusTooLong, trace.ReasonTooLong), fail(trace.StatusResolve, trace.ReasonSA),
		&trace.Result{Status: trace.StatusMismatch, Reason: trace.ReasonMismatch, Start: start, Duration: time.Millisecond, Hops: hops})
	before := memtest.HeapAlloc()
	for _, s := range dests {
		for _, r := range later {
			s.record(r)
		}
		s.record(first) // the same last result as before
	}
	grew := int64(memtest.HeapAlloc()) - int64(before)
	runtime.KeepAlive(later)
	t.Logf("%d more kinds of outcome: %d bytes kept per destination", len(later), grew/n)
	if grew/n > 64 {
		t.Fatalf("%d more kinds of outcome made each destination keep %d bytes more, want at most 64", len(later), grew/n)
	}

	// The scrape still shows every outcome that occurred, and only those.
	want := `# HELP ibtracer_trace_failures_total Failed traces by reason (a reason appears once it occurred).
# TYPE ibtracer_trace_failures_total counter
ibtracer_trace_failures_total{dest="d0001",rack="r0",reason="bad_destination"} 1
ibtracer_trace_failures_total{dest="d0001",rack="r0",reason="loop"} 1
ibtracer_trace_failures_total{dest="d0001",rack="r0",reason="no_route"} 1
ibtracer_trace_failures_total{dest="d0001",rack="r0",reason="port_down"} 1
ibtracer_trace_failures_total{dest="d0001",rack="r0",reason="port_mismatch"} 2
ibtracer_trace_failures_total{dest="d0001",rack="r0",reason="router_not_forwarding"} 1
ibtracer_trace_failures_total{dest="d0001",rack="r0",reason="sa_error"} 2
ibtracer_trace_failures_total{dest="d0001",rack="r0",reason="timeout"} 3
ibtracer_trace_failures_total{dest="d0001",rack="r0",reason="too_many_hops"} 2
ibtracer_trace_failures_total{dest="d0001",rack="r0",reason="wrong_port"} 1
# HELP ibtracer_traces_total Traces of all destinations together, by result.
# TYPE ibtracer_traces_total counter
ibtracer_traces_total{result="left_subnet"} 0
ibtracer_traces_total{result="mismatch"} 1
ibtracer_traces_total{result="ok"} 1
ibtracer_traces_total{result="resolve_failed"} 1
ibtracer_traces_total{result="too_long"} 1
ibtracer_traces_total{result="unreachable"} 12
`
	one := New(log.NewNopLogger(), "")
	defer one.Stop()
	one.Apply(mustConfig(t, "interval: 1h\ndestinations:\n  - {name: d0001, lid: 1, hops: false, labels: {rack: r0}}\n"))
	s := one.destinations()[0]
	s.record(ok)
	s.record(first)
	for _, r := range later {
		s.record(r)
	}
	s.record(first)
	if err := testutil.CollectAndCompare(one, strings.NewReader(want), "ibtracer_traces_total", "ibtracer_trace_failures_total"); err != nil {
		t.Fatal(err)
	}
}
