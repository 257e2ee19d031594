package collector

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// TestExporterFollowsMovedLIDs: a destination named by GUID keeps being
// traced to its port when the SM swaps its LID with another host's (one
// info line, resolved again, no failure, no other node's path), and the
// exporter's own LID changing is logged once, at warn, however many
// traces follow.
func TestExporterFollowsMovedLIDs(t *testing.T) {
	topo, err := sim.FatTree2(2, 2, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	f, err := sim.New(topo, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tp, err := f.Attach("H0-0", 0)
	if err != nil {
		t.Fatal(err)
	}
	eng := ibmad.NewEngine(tp, ibmad.Options{PortRefresh: 5 * time.Millisecond})
	t.Cleanup(func() { eng.Close() })
	target := f.Node("H1-1").Ports[1]

	var buf logBuffer
	fc := newFakeClock(time.Unix(1800000000, 0))
	e := New(log.NewLogfmtLogger(&buf), "seed")
	e.clock = fc
	defer e.Stop()
	e.SetDevice(eng, nil, nil)
	e.Apply(mustConfig(t, fmt.Sprintf("interval: 1s\ntimeout: 50ms\nvalidate: false\nresolve_ttl: 1h\n"+
		"destinations:\n  - {name: far, guid: %s}\n", target.GUID)))
	run := func(n int) []map[string]string {
		for i := 0; i < n; i++ {
			fc.WaitPending(t, 1, "between traces")
			fc.Advance()
		}
		fc.WaitPending(t, 1, "after the traces")
		return buf.take(t)
	}
	lastAt := func(what string) {
		t.Helper()
		s := e.dests.get("far")
		s.mu.Lock()
		r, failures := s.last, s.failures
		s.mu.Unlock()
		if r == nil || r.Status != "ok" || r.Hops[len(r.Hops)-1].PortGUID != target.GUID || r.DLID != target.LID {
			t.Fatalf("%s: last trace %+v, want ok at H1-1's port, LID %d", what, r, target.LID)
		}
		if failures != nil {
			t.Fatalf("%s: failures counted: %v", what, *failures)
		}
	}
	const moved, localMoved = "destination's LID leads to another port: resolving it again",
		"the local port's LID changed: resolving every destination again"
	lines := run(2)
	lastAt("before")
	if n := len(withMsg(lines, moved)) + len(withMsg(lines, localMoved)); n != 0 {
		t.Fatalf("before: %v", lines)
	}

	// The SM swaps H1-1's LID with H1-0's.
	a, b := target.LID, f.Node("H1-0").Ports[1].LID
	if err := f.SetPortLID("H1-1", 1, b); err != nil {
		t.Fatal(err)
	}
	if err := f.SetPortLID("H1-0", 1, a); err != nil {
		t.Fatal(err)
	}
	f.Reroute()
	lines = run(3)
	lastAt("after the swap")
	if got := withMsg(lines, moved); len(got) != 1 || got[0]["level"] != "info" || got[0]["old_dlid"] != fmt.Sprint(a) {
		t.Fatalf("after the swap: %d %q lines, want one at info naming old_dlid %d: %v", len(got), moved, a, lines)
	}
	if n := len(withMsg(lines, "destination failing")); n != 0 {
		t.Fatalf("after the swap: a failure logged: %v", lines)
	}
	// The SM may route the new LID another way; never to H1-0.
	for _, l := range withMsg(lines, "path changed") {
		if strings.Contains(l["new_path"], f.Node("H1-0").GUID.String()) {
			t.Fatalf("after the swap: a path to H1-0 reported: %v", l)
		}
	}

	// The SM moves the exporter's own LID.
	src, _ := f.LIDOf("H0-0", 0)
	if err := f.SetPortLID("H0-0", 1, 200); err != nil {
		t.Fatal(err)
	}
	f.Reroute()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		if p, err := eng.Port(); err == nil && p.LID == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the engine never saw the local LID change")
		}
	}
	lines = run(4)
	lastAt("after the local LID changed")
	got := withMsg(lines, localMoved)
	if len(got) != 1 || got[0]["level"] != "warn" || got[0]["old_lid"] != fmt.Sprint(src) || got[0]["new_lid"] != "200" {
		t.Fatalf("local LID %d -> 200: %d %q lines, want one at warn: %v", src, len(got), localMoved, lines)
	}
}
