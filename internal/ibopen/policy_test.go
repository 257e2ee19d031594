package ibopen

import (
	"strings"
	"testing"
)

// TestAgentPolicy: --sim.agents's forms, hosts:N% among them (N% of the
// hosts, no switch: the demo's real-fabric setting), and a bad one named.
func TestAgentPolicy(t *testing.T) {
	for in, want := range map[string]struct {
		frac      float64
		hostsOnly bool
	}{
		"all": {1, false}, "hosts": {1, true}, "none": {0, true}, "": {0, true},
		"80%": {0.8, false}, "0%": {0, false}, "hosts:80%": {0.8, true}, "hosts:100%": {1, true},
	} {
		frac, hostsOnly, err := parseAgentPolicy(in)
		if err != nil || frac != want.frac || hostsOnly != want.hostsOnly {
			t.Errorf("%q: %v %v %v, want %v %v", in, frac, hostsOnly, err, want.frac, want.hostsOnly)
		}
	}
	for _, in := range []string{"hosts:", "hosts:101%", "switches:50%", "x%", "-1%"} {
		if _, _, err := parseAgentPolicy(in); err == nil || !strings.Contains(err.Error(), "--sim.agents \""+in+"\"") {
			t.Errorf("%q: %v, want an error naming it", in, err)
		}
	}
}
