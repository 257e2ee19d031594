package fleet

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// lineLog keeps every line a logger writes, as key/value maps.
type lineLog struct {
	mu    sync.Mutex
	lines []map[string]any
}

func (l *lineLog) Log(kv ...any) error {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[fmt.Sprint(kv[i])] = kv[i+1]
	}
	l.mu.Lock()
	l.lines = append(l.lines, m)
	l.mu.Unlock()
	return nil
}

// with returns the lines whose msg is one of msgs.
func (l *lineLog) with(msgs ...string) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, m := range l.lines {
		for _, msg := range msgs {
			if m["msg"] == msg {
				out = append(out, m)
			}
		}
	}
	return out
}

// discoveryMsgs are the lines a selector's refreshes may log.
var discoveryMsgs = []string{
	"discovery refresh failed; keeping the previous destinations",
	"discovery refresh failing; keeping the previous destinations",
	"discovery refresh failure changed; keeping the previous destinations",
	"discovery refresh recovered",
}

// TestRefreshLogKinds: a failure of another kind (the device went away
// while the SA was failing) is one more line, with the count so far; the
// same kind with another message is not.
func TestRefreshLogKinds(t *testing.T) {
	rec := &lineLog{}
	var l refreshLog
	at := time.Unix(1800000000, 0)
	l.observe(rec, 2, at, errors.New("SA: timeout"))
	l.observe(rec, 2, at.Add(10*time.Second), errors.New("SA: status 0x0100"))
	l.observe(rec, 2, at.Add(20*time.Second), ErrNoInventory)
	l.observe(rec, 2, at.Add(21*time.Second), ErrNoInventory)
	l.observe(rec, 2, at.Add(22*time.Second), nil)
	l.observe(rec, 2, at.Add(32*time.Second), nil)
	got := rec.with(discoveryMsgs...)
	if len(got) != 3 {
		t.Fatalf("%d lines, want 3 (failing, failure changed, recovered): %v", len(got), got)
	}
	if got[0]["kind"] != "sa_error" || got[1]["msg"] != discoveryMsgs[2] || got[1]["kind"] != "no_inventory" ||
		got[1]["previous_kind"] != "sa_error" || got[1]["failed_refreshes"] != uint64(2) || got[1]["selector"] != 2 {
		t.Fatalf("lines %v", got[:2])
	}
	if got[2]["failed_refreshes"] != uint64(4) || got[2]["failed_for"] != 22*time.Second {
		t.Fatalf("recovered: %v", got[2])
	}
	if n := len(rec.with("discovery refresh failed")); n != 4 {
		t.Fatalf("%d debug lines, want one per failed refresh (4)", n)
	}
}
