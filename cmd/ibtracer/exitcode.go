package main

import (
	"github.com/ibtracer/ibtracer_exporter/linkhealth"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// Exit statuses of ibtracer (the package comment, "Exit status").
const (
	exitOK          = 0
	exitMismatch    = 1
	exitUsage       = 2
	exitTooLong     = 3
	exitUnreachable = 4
	exitResolve     = 5
	exitDevice      = 6
)

// resultExit maps a trace's outcome to the command's exit status; an
// outcome it does not know is a device error.
func resultExit(r *trace.Result) int {
	switch r.Status {
	case trace.StatusOK, trace.StatusLeftSubnet: // leaving the subnet is not a failure
		return exitOK
	case trace.StatusMismatch:
		return exitMismatch
	case trace.StatusTooLong:
		return exitTooLong
	case trace.StatusUnreachable:
		return exitUnreachable
	case trace.StatusResolve:
		return exitResolve
	}
	return exitDevice
}

// exitCode: a mismatch (or, with --health, an unhealthy link) wins;
// otherwise the highest status.
func exitCode(rs []*trace.Result, hs []*linkhealth.PathHealth) int {
	code := exitOK
	for i, r := range rs {
		c := resultExit(r)
		if hs != nil {
			c = healthExit(c, hs[i])
		}
		if c == exitMismatch {
			return c
		}
		if c > code {
			code = c
		}
	}
	return code
}
