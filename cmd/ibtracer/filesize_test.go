package main

import (
	"bytes"
	"strings"
	"testing"
)

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
