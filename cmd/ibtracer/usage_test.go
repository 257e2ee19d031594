package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestHealthWithLMCAllIsUsageError: --lmc-all traces sets of paths that
// --health does not judge; asking for both is refused, not ignored.
func TestHealthWithLMCAllIsUsageError(t *testing.T) {
	_, errOut, code := simCLI(t, "two-switch.net", "host1", "--lmc-all", "--health", "-l", "3")
	if code != 2 || !strings.Contains(errOut, "does not combine with --lmc-all") {
		t.Fatalf("exit %d, stderr %q; want 2 and the reason", code, errOut)
	}
}

// TestLMCAllFromAnotherPortIsUsageError: --lmc-all traces from the local
// port; a SRC_LID with it is refused, and so is --health with --all too:
// nothing printed but the reason.
func TestLMCAllFromAnotherPortIsUsageError(t *testing.T) {
	for _, args := range [][]string{{"--lmc-all", "3", "5"}, {"--lmc-all", "--all", "--health"}} {
		out, errOut, code := simCLI(t, "two-switch.net", "host1", args...)
		if code != 2 || !strings.Contains(errOut, "--lmc-all") || out != "" {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q; want 2, nothing printed, and the reason", args, code, out, errOut)
		}
	}
}

// Files given on the command line that never end (/dev/zero) are refused
// with the file and the bound named, before any MAD is sent: -n and
// --threshold-file are bad usage (exit 2); --sim.topology fails to open
// the simulated transport.
func TestEndlessInputFilesRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-n", "/dev/zero", "-l", "1"}, exitUsage,
			"ibtracer: --node-name-map: /dev/zero: larger than 32 MiB, the most a node-name-map may hold\n"},
		{[]string{"--threshold-file", "/dev/zero", "-l", "1"}, exitUsage,
			"ibtracer: --threshold-file: /dev/zero: larger than 1 MiB, the most a threshold file may hold\n"},
		{[]string{"--sim.topology", "/dev/zero", "-l", "1"}, exitDevice,
			"ibtracer: topology: /dev/zero: larger than 64 MiB, the most a topology file may hold\n"},
	} {
		t.Run(strings.Join(tc.args[:2], " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(append([]string{"--ib.transport=sim"}, tc.args...), &out, &errb)
			if code != tc.code || errb.String() != tc.want {
				t.Fatalf("exit %d, stderr %q; want exit %d, %q", code, errb.String(), tc.code, tc.want)
			}
		})
	}
}
