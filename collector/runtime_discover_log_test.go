package collector

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/ibtracer/ibtracer_exporter/internal/logtest"
)

func first(lines []map[string]any) map[string]any {
	if len(lines) == 0 {
		return nil
	}
	return lines[0]
}

// discoveryMsgs are the lines a selector's refreshes may log.
var discoveryMsgs = []string{
	"discovery refresh failed; keeping the previous destinations",
	"discovery refresh failing; keeping the previous destinations",
	"discovery refresh failure changed; keeping the previous destinations",
	"discovery refresh recovered",
}

// TestDiscoveryLogsStateChanges: while the device is down the discovery
// loop retries every second, and while the SA fails, every refresh; it
// logs (at the default level, info) when the refresh starts failing, and
// when it recovers with how long it failed and how many refreshes failed,
// not once per attempt. The outage is simulated on the fake clock, step
// by step: each step waits until the loop has armed its next timer, that
// is has finished the attempt and its logging.
func TestDiscoveryLogsStateChanges(t *testing.T) {
	start := time.Unix(1800000000, 0)
	fc := newFakeClock(start)
	rec := &logtest.Lines{}
	e := New(level.NewFilter(log.Logger(rec), level.AllowInfo()), "seed")
	e.clock = fc
	defer e.Stop()
	// armed waits until the loop's only timer is due at at.
	armed := func(at time.Time, what string) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for fc.Pending() != 1 || !fc.Next().Equal(at) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d timers pending, next at %v, want 1 at %v", what, fc.Pending(), fc.Next().Sub(start), at.Sub(start))
			}
			time.Sleep(time.Millisecond)
		}
	}
	refreshes := e.refreshCounts
	// No device, no inventory: every attempt fails, one a second.
	e.Apply(mustConfig(t, "interval: 1h\ndiscover:\n  - node_desc: '^nothing matches$'\n    refresh: 10s\n"))
	armed(start.Add(time.Second), "first attempt")
	for s := 1; s <= 60; s++ {
		fc.Add(time.Second)
		armed(start.Add(time.Duration(s+1)*time.Second), fmt.Sprintf("attempt at %ds", s))
	}
	if ok, failed := refreshes(); ok != 0 || failed != 61 {
		t.Fatalf("refreshes ok %d, failed %d: want 0 and 61 (the outage was not simulated)", ok, failed)
	}
	if got := rec.With(discoveryMsgs...); len(got) != 1 || got[0]["msg"] != discoveryMsgs[1] || got[0]["err"] == nil {
		t.Fatalf("61 failed attempts over 60 s logged %d lines, want 1 (failing, with err); the first: %v", len(got), first(got))
	}
	// The device is back: the next attempt succeeds and says so, once.
	inv := &fakeInventory{ports: testInventory()}
	e.setInventory(inv)
	armed(start.Add(70*time.Second), "recovery")
	rs := rec.With(discoveryMsgs[3])
	if len(rs) != 1 || rs[0]["failed_refreshes"] != uint64(61) || rs[0]["failed_for"] != 60*time.Second {
		t.Fatalf("after recovery: %v, want one %q line with failed_refreshes 61 and failed_for 1m0s", rec.With(discoveryMsgs...), discoveryMsgs[3])
	}
	// The SA fails for a minute: refreshes every 10 s, one line.
	inv.set(nil, errors.New("SA: timeout"))
	for s := 80; s <= 140; s += 10 {
		fc.Add(10 * time.Second)
		armed(start.Add(time.Duration(s)*time.Second), fmt.Sprintf("SA failing at %ds", s-10))
	}
	if ok, failed := refreshes(); ok != 1 || failed != 61+7 {
		t.Fatalf("refreshes ok %d, failed %d: want 1 and 68", ok, failed)
	}
	if got := rec.With(discoveryMsgs...); len(got) != 3 {
		t.Fatalf("after 7 failed SA refreshes: %d lines, want 3 (failing, recovered, failing): %v", len(got), got)
	}
	inv.set(testInventory(), nil)
	fc.Add(10 * time.Second)
	armed(start.Add(150*time.Second), "SA recovery")
	rs = rec.With(discoveryMsgs[3])
	if len(rs) != 2 || rs[1]["failed_refreshes"] != uint64(7) || rs[1]["failed_for"] != 70*time.Second {
		t.Fatalf("after the SA recovered: %v, want a second %q line with failed_refreshes 7 and failed_for 1m10s", rec.With(discoveryMsgs...), discoveryMsgs[3])
	}
}
