package service

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A reload whose plan: no longer parses is refused with the plan's file,
// line and fault, and the running configuration (its plan too) is kept;
// a good plan is taken at the next reload.
func TestReloadKeepsTheOldConfigOnABadPlan(t *testing.T) {
	h := startHostedAgent(t, "interval: 1s\njitter_seed: t\ndestinations:\n  - {name: one, lid: 1}\n")
	planFile := filepath.Join(filepath.Dir(h.cfgFile), "plan.net")
	if err := os.WriteFile(planFile, []byte("Switch 4 \"S0\"\n[1] \"L0\"[1]\n[1] \"L1\"[1]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeConfig(t, h.cfgFile, "interval: 1s\njitter_seed: t\nplan: plan.net\ndestinations:\n  - {name: one, lid: 1}\n  - {name: two, lid: 2}\n")
	err := h.s.Reload()
	want := h.cfgFile + ":3: plan: " + planFile + ":3: port 1 of \"S0\" is cabled again (first at line 2)"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("reload: got  %v\nwant %s", err, want)
	}
	if v := metric(t, h.reg, "ibtracer_config_last_reload_successful", nil); v != 0 {
		t.Fatalf("config_last_reload_successful %v after a refused reload", v)
	}
	if v := metric(t, h.reg, "ibtracer_destinations", nil); v != 1 {
		t.Fatalf("%v destinations after the refused reload: the old configuration (1) was not kept", v)
	}
	if err := os.WriteFile(planFile, []byte("Switch 4 \"S0\"\n[1] \"L0\"[1]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := h.s.Reload(); err != nil {
		t.Fatal(err)
	}
	if v := metric(t, h.reg, "ibtracer_plan_links_not_crossed", nil); v != 1 {
		t.Fatalf("plan_links_not_crossed %v after a good reload, want 1", v)
	}
}
