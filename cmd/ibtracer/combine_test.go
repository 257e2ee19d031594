package main

import (
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
