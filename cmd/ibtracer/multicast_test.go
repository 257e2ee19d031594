package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestMulticastUsage: -m's argument and the flags it does not combine
// with are usage errors, named, before any device is opened.
func TestMulticastUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-m", "0xBFFF", "5"}, `-m "0xBFFF": want a multicast LID 0xC000..0xFFFE`},
		{[]string{"-m", "0xFFFF", "5"}, `-m "0xFFFF": want a multicast LID`},
		{[]string{"-m", "c001", "5"}, `-m "c001": want a multicast LID`},
		{[]string{"-m", "0xC001", "-l", "5", "6"}, "no -l, -g, -G, --node or --all with it"},
		{[]string{"-m", "0xC001", "--lmc-all", "6"}, "-m does not combine with --lmc-all"},
		{[]string{"-m", "0xC001", "--discovery=sa", "6"}, "--discovery=sa cannot trace multicast"},
	} {
		var out, errb bytes.Buffer
		code := run(append([]string{"--ib.transport=ibsim"}, tc.args...), &out, &errb)
		if code != exitUsage || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d naming %q", tc.args, code, errb.String(), exitUsage, tc.want)
		}
	}
	for _, s := range []string{"0xC000", "0xc001", "49153", "0xFFFE"} {
		if _, err := parseMLID(s); err != nil {
			t.Errorf("parseMLID(%q): %v", s, err)
		}
	}
}
