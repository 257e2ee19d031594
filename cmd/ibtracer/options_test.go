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
