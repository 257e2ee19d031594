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
