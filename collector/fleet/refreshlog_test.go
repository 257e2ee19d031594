package fleet

import (
	"errors"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/internal/logtest"
)

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
	rec := &logtest.Lines{}
	var l refreshLog
	at := time.Unix(1800000000, 0)
	l.observe(rec, 2, at, errors.New("SA: timeout"))
	l.observe(rec, 2, at.Add(10*time.Second), errors.New("SA: status 0x0100"))
	l.observe(rec, 2, at.Add(20*time.Second), ErrNoInventory)
	l.observe(rec, 2, at.Add(21*time.Second), ErrNoInventory)
	l.observe(rec, 2, at.Add(22*time.Second), nil)
	l.observe(rec, 2, at.Add(32*time.Second), nil)
	got := rec.With(discoveryMsgs...)
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
	if n := len(rec.With("discovery refresh failed")); n != 4 {
		t.Fatalf("%d debug lines, want one per failed refresh (4)", n)
	}
}
