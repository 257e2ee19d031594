package e2e

import (
	"fmt"
	"testing"
	"time"
)

// TestPathChange: Unlink a link on a traced path on ibsim's console;
// OpenSM re-sweeps and ibtracer_path_changes_total of that destination
// rises; restoring the link makes it rise again; the other destination
// does not change.
func TestPathChange(t *testing.T) {
	skipShort(t)
	fab, lids := startTwoSwitch(t)
	startAgents(t, fab, "host2")
	cfg := fmt.Sprintf("interval: 1s\ntimeout: 200ms\nretries: 1\ndestinations:\n  - {name: far, lid: %d}\n  - {name: near, lid: %d}\n",
		lids["host2"], lids["host3"])
	p := startIbsimExporter(t, fab, "host1", cfg)
	p.waitFor(30*time.Second, "first traces", allTraced("far", "near"))
	// Which of the two parallel sw1-sw2 cables does the path to host2 use?
	port := p.outPort("far", "sw1")
	if port != 3 && port != 5 {
		t.Fatalf("path to host2 leaves sw1 by port %d, want 3 or 5", port)
	}
	changes := func(name string) func(string) float64 {
		return func(b string) float64 {
			v, _ := value(b, fmt.Sprintf(`ibtracer_path_changes_total{dest=%q}`, name))
			return v
		}
	}
	if err := fab.Console(fmt.Sprintf(`Unlink "sw1"[%d]`, port)); err != nil {
		t.Fatal(err)
	}
	b := p.waitFor(45*time.Second, "a path change after Unlink", func(b string) bool { return changes("far")(b) >= 1 })
	if n := changes("near")(b); n != 0 {
		t.Fatalf("the other destination changed %v times", n)
	}
	if err := fab.Console(fmt.Sprintf(`Link "sw1"[%d] "sw2"[%d]`, port, port)); err != nil {
		t.Fatal(err)
	}
	b = p.waitFor(45*time.Second, "a second path change after the link returned", func(b string) bool { return changes("far")(b) >= 2 })
	if n := changes("near")(b); n != 0 {
		t.Fatalf("the other destination changed %v times", n)
	}
	if ts, _ := value(b, `ibtracer_path_last_change_timestamp_seconds{dest="far"}`); ts < float64(time.Now().Add(-time.Minute).Unix()) {
		t.Fatalf("last change timestamp %v", ts)
	}
}
