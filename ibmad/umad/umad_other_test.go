//go:build !linux

package umad

import (
	"strings"
	"testing"
)

func TestOpenSaysLinux(t *testing.T) {
	if _, err := Open(Options{}); err == nil || !strings.Contains(err.Error(), "umad needs Linux") {
		t.Fatalf("Open: %v", err)
	}
}
