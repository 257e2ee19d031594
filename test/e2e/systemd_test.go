package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/internal/promtest"
)

// TestSystemdUnit: systemd-analyze verify passes on the shipped unit (with
// ExecStart pointing at a built binary) and reports its exposure.
func TestSystemdUnit(t *testing.T) {
	skipShort(t)
	sa := promtest.RequireTool(t, "systemd-analyze", "systemd")
	bin, _ := binaries(t)
	unit, err := os.ReadFile(filepath.Join(root, "examples/systemd/ibtracer_exporter.service"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	local := strings.Replace(string(unit), "/usr/bin/ibtracer_exporter", bin, 1)
	path := filepath.Join(dir, "ibtracer_exporter.service")
	if err := os.WriteFile(path, []byte(local), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(sa, "verify", path).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) != 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
	out, _ = exec.Command(sa, "security", "--offline=true", path).CombinedOutput()
	m := regexp.MustCompile(`Overall exposure level for \S+: ([0-9.]+) (\S+)`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("no exposure figure:\n%s", out)
	}
	t.Logf("systemd-analyze security: exposure %s %s", m[1], m[2])
	if m[2] != "OK" {
		t.Fatalf("exposure %s %s, want OK", m[1], m[2])
	}
}
