package service

import "testing"

// A reload whose node_name_map is /dev/zero (a file without end) is
// refused, promptly and with the file and the bound named, and the
// running configuration is kept; the exporter is not killed by memory
// exhaustion.
func TestReloadRefusesAnEndlessNodeNameMap(t *testing.T) {
	h := startHostedAgent(t, "interval: 1s\njitter_seed: t\ndestinations:\n  - {name: one, lid: 1}\n")
	writeConfig(t, h.cfgFile, "interval: 1s\njitter_seed: t\nnode_name_map: /dev/zero\n"+
		"destinations:\n  - {name: one, lid: 1}\n  - {name: two, lid: 2}\n")
	err := h.s.Reload()
	want := h.cfgFile + ":3: node_name_map: /dev/zero: larger than 32 MiB, the most a node-name-map may hold"
	if err == nil || err.Error() != want {
		t.Fatalf("reload: got  %v\nwant %s", err, want)
	}
	if v := metric(t, h.reg, "ibtracer_config_last_reload_successful", nil); v != 0 {
		t.Fatalf("config_last_reload_successful %v after a refused reload", v)
	}
	if v := metric(t, h.reg, "ibtracer_destinations", nil); v != 1 {
		t.Fatalf("%v destinations after the refused reload: the old configuration (1) was not kept", v)
	}
	// The service still reloads a good file.
	writeConfig(t, h.cfgFile, "interval: 1s\njitter_seed: t\ndestinations:\n  - {name: one, lid: 1}\n  - {name: two, lid: 2}\n")
	if err := h.s.Reload(); err != nil {
		t.Fatal(err)
	}
	if v := metric(t, h.reg, "ibtracer_destinations", nil); v != 2 {
		t.Fatalf("%v destinations after a good reload, want 2", v)
	}
}
