package config

import (
	"testing"

	"github.com/ibtracer/ibtracer_exporter/trace"
)

// TestPathsAndDiscovery: paths defaults to one and accepts all; discovery
// defaults to auto and accepts smp and sa; anything else names its line.
func TestPathsAndDiscovery(t *testing.T) {
	c, err := Parse("p.yml", []byte("discovery: sa\ndestinations:\n  - name: a\n    lid: 4\n    paths: all\n  - name: b\n    lid: 8\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Discovery != trace.DiscoverySA || !c.Destinations[0].AllPaths() || c.Destinations[1].AllPaths() || c.Destinations[1].Paths != PathsOne {
		t.Fatalf("discovery %q, paths %q %q", c.Discovery, c.Destinations[0].Paths, c.Destinations[1].Paths)
	}
	if empty, err := Parse("e.yml", nil); err != nil || empty.Discovery != trace.DiscoveryAuto {
		t.Fatalf("default discovery: %v %q", err, empty.Discovery)
	}
	for _, tc := range []struct{ in, want string }{
		{"destinations:\n  - name: a\n    lid: 4\n    paths: some\n", `x.yml:4: destinations[0] (a).paths: "some": want one (the LID given) or all (every LID of the port's LMC range)`},
		{"interval: 30s\ndiscovery: smps\n", `x.yml:2: discovery: "smps": want smp, sa or auto`},
		{"destinations:\n  - name: a\n    lid: 4\n    labels: {lid_offset: x}\n", `x.yml:4: destinations[0] (a).labels: "lid_offset" is set by the exporter; choose another name`},
	} {
		if _, err := Parse("x.yml", []byte(tc.in)); err == nil || err.Error() != tc.want {
			t.Errorf("got  %v\nwant %s", err, tc.want)
		}
	}
}
