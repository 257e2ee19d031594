package main

import (
	"testing"

	"github.com/ibtracer/ibtracer_exporter/trace"
)

// TestResultExit: each outcome's exit status is the one the package
// comment documents; an outcome the command does not know is a device
// error (6), never success.
func TestResultExit(t *testing.T) {
	for st, want := range map[trace.Status]int{
		trace.StatusOK: 0, trace.StatusLeftSubnet: 0, trace.StatusMismatch: 1, trace.StatusTooLong: 3, trace.StatusUnreachable: 4,
		trace.StatusResolve: 5, trace.StatusDevice: 6, "brand_new": 6,
	} {
		if got := resultExit(&trace.Result{Status: st}); got != want {
			t.Errorf("%s: exit %d, want %d", st, got, want)
		}
	}
}
