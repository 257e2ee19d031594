package collector

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// A path that changes back to the one it had before its previous change
// is a return (ibtracer_path_returns_total, docs/metrics.md "Path
// changes"): a pulled cable put back. A flap that goes down again onto
// the same detour is a change again, not a second return; so is a third
// path. Discovered destinations (no hop series) count them too; the
// series is there once the path changed.
func TestPathReturnsCounted(t *testing.T) {
	e := New(log.NewNopLogger(), "seed")
	defer e.Stop()
	e.Apply(mustConfig(t, `
interval: 1h
destinations:
  - name: db01
    lid: 9
    hops: false
  - name: idle
    lid: 10
`))
	start := time.Unix(1800000000, 0)
	at := 0
	trace1 := func(out uint8) {
		r := &trace.Result{Status: trace.StatusOK, Start: start.Add(time.Duration(at) * time.Minute), Duration: time.Millisecond, DLID: 9,
			Hops: []trace.Hop{{Hop: 0, NodeGUID: 0x10, NodeType: ibmad.NodeTypeCA, OutPort: 1},
				{Hop: 1, NodeGUID: 0x20, NodeType: ibmad.NodeTypeSwitch, InPort: 1, OutPort: out},
				{Hop: 2, NodeGUID: 0x30, NodeType: ibmad.NodeTypeCA, InPort: 1}}}
		at++
		e.dests.get("db01").record(r)
	}
	check := func(changes, returns int) {
		t.Helper()
		want := `
# HELP ibtracer_path_changes_total Times the traced path (nodes and ports) changed.
# TYPE ibtracer_path_changes_total counter
ibtracer_path_changes_total{dest="db01"} ` + strconv.Itoa(changes) + `
ibtracer_path_changes_total{dest="idle"} 0
`
		if changes > 0 { // the series is there once the path changed
			want += `# HELP ibtracer_path_returns_total ` + helpReturns + `
# TYPE ibtracer_path_returns_total counter
ibtracer_path_returns_total{dest="db01"} ` + strconv.Itoa(returns) + `
`
		}
		if err := testutil.CollectAndCompare(e, strings.NewReader(want), "ibtracer_path_changes_total", "ibtracer_path_returns_total"); err != nil {
			t.Fatal(err)
		}
	}
	trace1(4) // the first path: no change
	check(0, 0)
	trace1(5) // pulled: a detour
	check(1, 0)
	trace1(4) // put back: a return
	check(2, 1)
	trace1(5) // down again onto the same detour: a change, not a return
	check(3, 1)
	trace1(6) // another detour
	check(4, 1)
	trace1(5) // back to the detour before it: a return
	check(5, 2)
	trace1(6) // and away again: a change
	check(6, 2)
}
