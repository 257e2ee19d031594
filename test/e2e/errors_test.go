package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestErrorsKeepServing: an unreachable LID, an unknown GID (an SA error)
// and a missing device (a CA name no machine has) each give a clear error
// while the exporter serves.
func TestErrorsKeepServing(t *testing.T) {
	skipShort(t)
	p := startExporter(t, nil, "interval: 1s\ntimeout: 100ms\nretries: 1\ndestinations:\n"+
		"  - {name: nowhere, lid: 4000}\n  - {name: ghost, gid: \"fe80::dead:beef\"}\n  - {name: fine, node: H2-2}\n", "--ib.transport=sim")
	b := p.waitFor(20*time.Second, "failures counted", func(b string) bool {
		nr, _ := value(b, `ibtracer_trace_failures_total{dest="nowhere",reason="no_route"}`)
		sa, _ := value(b, `ibtracer_trace_failures_total{dest="ghost",reason="sa_error"}`)
		return nr >= 1 && sa >= 1 && allTraced("fine")(b)
	})
	if v, _ := value(b, `ibtracer_trace_success{dest="fine"}`); v != 1 {
		t.Fatal("a healthy destination suffered")
	}
	logs := p.Logs()
	for _, want := range []string{"no route to LID 4000", "resolving gid fe80:0000:0000:0000:0000:0000:dead:beef: the SA knows no such port"} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %q", want)
		}
	}
	// The umad transport pointed at a CA that exists on no machine finds no
	// device, whether or not this machine has InfiniBand hardware.
	// jitter_seed lets the destination's loop run without a device (its
	// phase needs no port GUID): the traces it would run are skipped and
	// counted as such, never charged to the destination.
	q := startExporter(t, nil, "interval: 1s\njitter_seed: e2e\ndestinations:\n  - {name: x, lid: 3}\n", "--ib.transport=umad", "--ib.ca=nosuchca0")
	b = q.waitFor(20*time.Second, "device_up 0 and a skipped trace", func(b string) bool {
		up, ok := value(b, "ibtracer_device_up")
		skipped, _ := value(b, `ibtracer_traces_skipped_total{reason="device_down"}`)
		return ok && up == 0 && skipped >= 1
	})
	for _, line := range strings.Split(b, "\n") {
		// x is the only destination: the exporter's traces are its.
		if strings.HasPrefix(line, "ibtracer_traces_total{") && !strings.HasSuffix(line, " 0") {
			t.Errorf("a trace without a device was charged to the destination: %s", line)
		}
		if strings.HasPrefix(line, "ibtracer_trace_failures_total{") && strings.Contains(line, `dest="x"`) && !strings.HasSuffix(line, " 0") {
			t.Errorf("a failure without a device was charged to the destination: %s", line)
		}
	}
	if code, _ := q.get("/-/healthy"); code != 200 {
		t.Fatal("not serving")
	}
	if !strings.Contains(q.Logs(), "cannot open the InfiniBand device; the exporter keeps serving and retries") ||
		!strings.Contains(q.Logs(), `CA \"nosuchca0\" not found`) || !strings.Contains(q.Logs(), "ibstat -l") {
		t.Fatalf("log:\n%s", q.Logs())
	}
}
