package main

import (
	"strings"
	"testing"
)

// TestSLFlagAndReport: without --sl a GUID destination's validation MADs
// take its PathRecord's SL and a LID's the default; --sl, even --sl 0,
// wins; -v and the JSON say which (docs/protocol.md, "SL and GRH").
func TestSLFlagAndReport(t *testing.T) {
	const guid = "0x0000000000100001" // H0-0's port in the sim's numbering
	for _, tc := range []struct {
		args []string
		sl   uint8
		from string
	}{
		{[]string{"-G", guid}, 0, "path_record"},
		{[]string{"-G", guid, "--sl", "0"}, 0, "option"},
		{[]string{"-G", guid, "--sl", "4"}, 4, "option"},
		{[]string{"-l", "5"}, 0, "default"},
	} {
		rs := simJSON(t, "fattree-mini.net", "H1-2", tc.args...)
		a := rs[0].Addressing
		if a == nil || a.SL != tc.sl || a.SLFrom != tc.from || a.GRH {
			t.Errorf("%v: addressing %+v, want SL %d from %s, no GRH", tc.args, a, tc.sl, tc.from)
		}
	}
	out, errOut, code := simCLI(t, "fattree-mini.net", "H1-2", "-G", guid, "--sl", "4", "-v")
	if code != exitOK || !strings.Contains(out, "Validation MADs: SL 4 (from --sl/sl:), no GRH\n") {
		t.Fatalf("-v: exit %d\n%s%s", code, out, errOut)
	}
}
