package collector

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/go-logfmt/logfmt"
)

// logBuffer captures a go-kit logfmt logger's lines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// take returns the lines logged since the last take, decoded.
func (l *logBuffer) take(t *testing.T) []map[string]string {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]string
	d := logfmt.NewDecoder(&l.b)
	for d.ScanRecord() {
		m := map[string]string{}
		for d.ScanKeyval() {
			m[string(d.Key())] = string(d.Value())
		}
		out = append(out, m)
	}
	if err := d.Err(); err != nil {
		t.Fatal(err)
	}
	l.b.Reset()
	return out
}

func withMsg(lines []map[string]string, msg string) []map[string]string {
	var out []map[string]string
	for _, l := range lines {
		if l["msg"] == msg {
			out = append(out, l)
		}
	}
	return out
}

// A failing destination logs when its state changes, not on every
// trace; a path change logs the old and the new path, hop by hop.
func TestLogsStateChangesAndPathChanges(t *testing.T) {
	f, eng := simAt(t, 2, 2, 1)
	lid, _ := f.LIDOf("H1-0", 0)

	var buf logBuffer
	fc := newFakeClock(time.Unix(1800000000, 0))
	e := New(log.NewLogfmtLogger(&buf), "seed")
	e.clock = fc
	defer e.Stop()
	e.SetDevice(eng, nil, nil)
	e.Apply(mustConfig(t, fmt.Sprintf("interval: 1s\ntimeout: 20ms\nretries: 0\nvalidate: false\ndestinations:\n  - {name: far, lid: %d}\n", lid)))
	run := func(n int) []map[string]string {
		for i := 0; i < n; i++ {
			fc.WaitPending(t, 1, "between traces")
			fc.Advance()
		}
		fc.WaitPending(t, 1, "after the traces")
		return buf.take(t)
	}
	count := func(what string, lines []map[string]string, msg string, want int) []map[string]string {
		t.Helper()
		got := withMsg(lines, msg)
		if len(got) != want {
			t.Errorf("%s: %d %q lines, want %d; all lines: %v", what, len(got), msg, want, lines)
		}
		return got
	}

	lines := run(3)
	count("healthy", lines, "destination failing", 0)
	count("healthy", lines, "destination recovered", 0)
	count("healthy", lines, "path changed", 0)
	s := e.dests.get("far")
	s.mu.Lock()
	old := s.last
	s.mu.Unlock()
	if old == nil || len(old.Hops) != 5 {
		t.Fatalf("first traces: %+v", old)
	}
	up := int(old.Hops[1].OutPort)

	// The leaf's uplink in use goes down and the SM re-routes: one path change.
	if err := f.SetLinkState("L0", up, false, true); err != nil {
		t.Fatal(err)
	}
	lines = run(3)
	pc := count("re-routed", lines, "path changed", 1)
	count("re-routed", lines, "destination failing", 0)
	if len(pc) == 1 {
		o, n := pc[0]["old_path"], pc[0]["new_path"]
		if o == n || !strings.Contains(o, old.Hops[1].NodeGUID.String()) || !strings.Contains(o, fmt.Sprintf("[%d>%d]", old.Hops[1].InPort, up)) {
			t.Errorf("old_path %q, new_path %q: want the old path's hops with their ports, and a different new one", o, n)
		}
		if pc[0]["destination"] != "far" || len(strings.Split(n, " -> ")) != 5 {
			t.Errorf("path change line %v: want destination far and five hops in new_path", pc[0])
		}
	}

	// The destination's own link goes down (no re-route): failing, logged once.
	if err := f.SetLinkState("L1", 1, false, false); err != nil {
		t.Fatal(err)
	}
	lines = run(4)
	fl := count("host link down", lines, "destination failing", 1)
	if len(fl) == 1 && (fl[0]["state"] == "" || fl[0]["previous_state"] != "ok" || fl[0]["level"] != "warn") {
		t.Errorf("failing line %v: want level warn, a state and previous_state ok", fl[0])
	}
	for _, l := range withMsg(lines, "trace failed") {
		if l["level"] != "debug" {
			t.Errorf("host link down: a trace failure logged at %s on every trace: %v", l["level"], l)
		}
	}
	// The SM sweeps: the reason changes (the route is gone), logged once.
	f.Reroute()
	lines = run(3)
	fc2 := count("re-routed around the dead link", lines, "destination failure changed", 1)
	if len(fc2) == 1 && fc2[0]["state"] == fc2[0]["previous_state"] {
		t.Errorf("failure changed line %v: the state did not change", fc2[0])
	}
	// Back up: recovered, logged once.
	if err := f.SetLinkState("L1", 1, true, true); err != nil {
		t.Fatal(err)
	}
	lines = run(3)
	rc := count("link back", lines, "destination recovered", 1)
	if len(rc) == 1 && (rc[0]["state"] != "ok" || rc[0]["failed_traces"] == "0" || rc[0]["level"] != "info") {
		t.Errorf("recovered line %v: want state ok, failed_traces > 0, level info", rc[0])
	}
	count("link back", lines, "destination failing", 0)
}
