package collector

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ibtracer/ibtracer_exporter/collector/pages"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim/simtest"
)

// TestExporterPathLeavesSubnet: a gid: destination in the subnet behind a
// router is traced to the router, counted as a success (trace_success 1,
// traces_total{result="left_subnet"}), and /traces shows the remote part.
// When the router stops forwarding, the destination fails with reason
// router_not_forwarding and one log line says so. Only our simulator: no
// independent peer has routers here.
func TestExporterPathLeavesSubnet(t *testing.T) {
	var buf logBuffer
	e, fc, remote, router := remoteExporter(t, log.NewLogfmtLogger(&buf), "interval: 1s\nvalidate: false\n")
	run := func() {
		fc.WaitPending(t, 1, "between traces")
		fc.Advance()
		fc.WaitPending(t, 1, "after the trace")
	}
	run()
	want := `# HELP ibtracer_trace_success 1 if the last trace reached the destination and found no port mismatch.
# TYPE ibtracer_trace_success gauge
ibtracer_trace_success{dest="remote"} %d
# HELP ibtracer_traces_total Traces of all destinations together, by result.
# TYPE ibtracer_traces_total counter
ibtracer_traces_total{result="left_subnet"} 1
ibtracer_traces_total{result="mismatch"} 0
ibtracer_traces_total{result="ok"} 0
ibtracer_traces_total{result="resolve_failed"} 0
ibtracer_traces_total{result="too_long"} 0
ibtracer_traces_total{result="unreachable"} %d
`
	if err := testutil.CollectAndCompare(e, strings.NewReader(fmt.Sprintf(want, 1, 0)), "ibtracer_trace_success", "ibtracer_traces_total"); err != nil {
		t.Fatal(err)
	}
	w := get(t, e.TracesHandler(), "/traces?destination=remote", "application/json")
	var views []pages.TraceView
	if err := json.Unmarshal(w.Body.Bytes(), &views); err != nil || len(views) != 1 || views[0].Last == nil {
		t.Fatalf("/traces: %v %s", err, w.Body.String())
	}
	wantDLID, _ := remote.LIDOf("R-H3", 1)
	if j := views[0].Last; j.Status != "left_subnet" || j.Beyond == nil || j.Beyond.RemoteDLID != wantDLID || j.Beyond.NodeDesc != "R-H3" ||
		j.Hops[len(j.Hops)-1].NodeType != "router" {
		t.Fatalf("/traces: %s", w.Body.String())
	}
	if h := get(t, e.TracesHandler(), "/traces?destination=remote", "text/html").Body.String(); !strings.Contains(h, "Leaves the subnet at router "+sim.RouterGUID.String()+" port 1; subnet fec0:0:0:b::/64") ||
		!strings.Contains(h, "R-H3") {
		t.Fatalf("/traces HTML does not show where the path leaves the subnet:\n%s", h)
	}
	if lines := buf.take(t); len(withMsg(lines, "destination failing")) != 0 {
		t.Fatalf("a path that leaves the subnet logged as failing: %v", lines)
	}

	router.SetForwarding(false)
	run()
	want += `# HELP ibtracer_trace_failures_total Failed traces by reason (a reason appears once it occurred).
# TYPE ibtracer_trace_failures_total counter
ibtracer_trace_failures_total{dest="remote",reason="router_not_forwarding"} 1
`
	if err := testutil.CollectAndCompare(e, strings.NewReader(fmt.Sprintf(want, 0, 1)), "ibtracer_trace_success", "ibtracer_traces_total",
		"ibtracer_trace_failures_total"); err != nil {
		t.Fatal(err)
	}
	failing := withMsg(buf.take(t), "destination failing")
	if len(failing) != 1 || failing[0]["reason"] != "router_not_forwarding" || !strings.Contains(failing[0]["err"], "does not forward") {
		t.Fatalf("log lines %v, want one destination failing with reason router_not_forwarding", failing)
	}
}

// remoteExporter is an exporter on host H0-0 of simtest.TwoSubnets' local
// subnet, tracing one gid: destination "remote" (host R-H3 behind the
// router) with 20 ms timeouts and no retries after the configuration
// yml, with the remote subnet and the router; its fake clock holds the
// scheduler until the test advances it.
func remoteExporter(t *testing.T, logger log.Logger, yml string) (*Exporter, *fakeClock, *sim.Fabric, *sim.Router) {
	t.Helper()
	local, remote, router, err := simtest.TwoSubnets(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := local.Attach("H0-0", 0)
	if err != nil {
		t.Fatal(err)
	}
	eng := ibmad.NewEngine(tr, ibmad.Options{})
	t.Cleanup(func() { eng.Close() })
	fc := newFakeClock(time.Unix(1800000000, 0))
	e := New(logger, "seed")
	e.clock = fc
	t.Cleanup(e.Stop)
	e.SetDevice(eng, nil, nil)
	gid := ibmad.MakeGID(sim.RemoteSubnetPrefix, simtest.RemoteHostGUID(3))
	e.Apply(mustConfig(t, fmt.Sprintf("%stimeout: 20ms\nretries: 0\ndestinations:\n  - {name: remote, gid: %q}\n", yml, gid)))
	return e, fc, remote, router
}
