package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// The flags mean what the exporter's configuration means by the same
// knobs (config.TraceOptions): --retries 0 sends each MAD once, and the
// defaults are the engine's (one default MAD timeout everywhere).
func TestFlagsAsTraceOptions(t *testing.T) {
	none := (&options{retries: 0, timeoutMS: 250}).traceOptions(ibmad.OUIOpenIB)
	if *none.Retries != 0 || none.Timeout != 250*time.Millisecond {
		t.Errorf("--retries 0 --timeout 250: %+v; want no retry and 250ms", none)
	}
	if none.ShareFacts != shareForRun || none.ShareValidation != shareForRun {
		t.Errorf("facts shared for %v, verdicts for %v; want both for the run (%v)", none.ShareFacts, none.ShareValidation, shareForRun)
	}
	three := (&options{retries: 3, timeoutMS: 1}).traceOptions(ibmad.OUIOpenIB)
	if *three.Retries != 3 {
		t.Errorf("--retries 3: %+v", three)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"--help"}, &out, &errb); code != exitOK {
		t.Fatalf("--help: exit %d %s", code, errb.String())
	}
	for _, want := range []string{
		fmt.Sprintf("--timeout=%d ", ibmad.DefaultTimeout/time.Millisecond),
		fmt.Sprintf("--retries=%d ", ibmad.DefaultRetries),
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--help does not show the default %q:\n%s", want, out.String())
		}
	}
}

// The addresses and the OUI are read by trace's one parser each
// (trace.ParseDestination, trace.ParseOUI), with the configuration
// file's rules and messages: bad usage, exit 2, before any MAD.
func TestAddressAndOUIFlagsUseTracesParsers(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-G", "0x0"}, `ibtracer: -G "0x0" is not a port GUID such as 0x0002c90300a1b2c3; see ibtracer --help` + "\n"},
		{[]string{"-g", "fe80::zz"}, `ibtracer: -g "fe80::zz" is not a GID such as fe80::2:c903:a1:b2c3; see ibtracer --help` + "\n"},
		{[]string{"--node", strings.Repeat("n", 65)}, `ibtracer: --node "` + strings.Repeat("n", 65) + `": longer than 64 bytes; see ibtracer --help` + "\n"},
		{[]string{"-l", "1", "--oui", "001405"}, `ibtracer: --oui "001405" is not a 24-bit hex number such as 0x001405` + "\n"},
		{[]string{"-l", "1", "--oui", "0x1000000"}, `ibtracer: --oui "0x1000000" is not a 24-bit hex number such as 0x001405` + "\n"},
	} {
		var out, errb bytes.Buffer
		code := run(append([]string{"--ib.transport=sim"}, tc.args...), &out, &errb)
		if code != exitUsage || errb.String() != tc.want {
			t.Errorf("%v: exit %d, stderr %q; want exit 2, %q", tc.args, code, errb.String(), tc.want)
		}
	}
}

// Integer flags take integers only (decimal or 0x hex) within their
// range, as the configuration's keys do: a fraction is not truncated and
// --sl 200 is refused as sl: 16 is. Bad usage: exit 2, before any MAD.
func TestIntegerFlagsStrict(t *testing.T) {
	for _, tc := range []struct{ arg, want string }{
		{"--sl=200", "ibtracer: --sl 200: want 0..15; see ibtracer --help\n"},
		{"--sl=16", "ibtracer: --sl 16: want 0..15; see ibtracer --help\n"},
		{"--retries=1.7", "ibtracer: --retries 1.7 is not an integer; see ibtracer --help\n"},
		{"--retries=11", "ibtracer: --retries 11: want 0..10; see ibtracer --help\n"},
		{"--timeout=1e3", "ibtracer: --timeout 1e3 is not an integer; see ibtracer --help\n"},
		{"--timeout=0", "ibtracer: --timeout 0: want 1..60000; see ibtracer --help\n"},
		{"--concurrency=2.9", "ibtracer: --concurrency 2.9 is not an integer; see ibtracer --help\n"},
		{"--concurrency=5000", "ibtracer: --concurrency 5000: want 1..4096; see ibtracer --help\n"},
		{"--ib.port=1.9", "ibtracer: --ib.port 1.9 is not an integer; see ibtracer --help\n"},
		{"-p300", "ibtracer: --ib.port 300: want 0..254; see ibtracer --help\n"},
		{"--sim.lmc=1.5", "ibtracer: --sim.lmc 1.5 is not an integer; see ibtracer --help\n"},
		{"--sim.lmc=8", "ibtracer: --sim.lmc 8: want 0..7; see ibtracer --help\n"},
		{"--retries=010", "ibtracer: --retries 010: write integers in decimal or as 0x hex; see ibtracer --help\n"},
	} {
		t.Run(strings.TrimLeft(tc.arg, "-"), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run([]string{"--ib.transport=sim", tc.arg, "-l", "1"}, &out, &errb)
			if code != exitUsage || errb.String() != tc.want {
				t.Fatalf("exit %d, stderr %q; want exit 2, %q", code, errb.String(), tc.want)
			}
		})
	}
}

// Hex and the ends of the ranges are accepted.
func TestIntegerFlagsAccepted(t *testing.T) {
	out, errOut, code := simCLI(t, "two-switch.net", "host1", "--sl=0xf", "--retries=0", "--timeout=0x3e8", "--concurrency=4096", "--all")
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
}

// A LID is read as the other integers are: 017 is neither 15 (C's octal)
// nor 17, it is refused.
func TestLIDArgumentsStrict(t *testing.T) {
	for _, args := range [][]string{{"-l", "017"}, {"017"}, {"-l", "12.9"}} {
		var out, errb bytes.Buffer
		code := run(append([]string{"--ib.transport=sim"}, args...), &out, &errb)
		if code != exitUsage || !strings.Contains(errb.String(), `"`+args[len(args)-1]+`": want a unicast LID 1..49151`) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and the LID refused", args, code, errb.String())
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"--ib.transport=sim", "-l", "0x3"}, &out, &errb); code != exitOK {
		t.Errorf("-l 0x3: exit %d, stderr %q", code, errb.String())
	}
}
