package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlanKey: plan: is read relative to the configuration file; a
// malformed plan is the configuration's error at the plan key's line,
// with the plan's own file, line and fault.
func TestPlanKey(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("good.net", "Switch 4 \"S0\"\n[1] \"L0\"[1]\n")
	write("bad.net", "Switch 4 \"S0\"\n[1] \"L0\"[1]\n[2] \"L0\"\n")
	good := write("good.yml", "interval: 30s\nplan: good.net\n")
	c, err := Load(good)
	if err != nil || c.Plan == nil || len(c.Plan.Links) != 1 {
		t.Fatalf("%v %+v", err, c)
	}
	bad := write("bad.yml", "interval: 30s\nplan: bad.net\n")
	_, err = Load(bad)
	want := bad + ":2: plan: " + filepath.Join(dir, "bad.net") + ":3: not a port line"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("got %v, want %s...", err, want)
	}
	missing := write("missing.yml", "plan: none.net\n")
	if _, err = Load(missing); err == nil || !strings.HasPrefix(err.Error(), missing+":1: plan: ") || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("missing: %v", err)
	}
	if _, err = Load(write("dev.yml", "plan: /dev/zero\n")); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("/dev/zero: %v", err)
	}
}
