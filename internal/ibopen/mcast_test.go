package ibopen

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// TestSimMulticastFlag: --sim.multicast programs the group's MFTs (an
// ibtracer -m trace over them reaches the member) and refuses a bad
// MLID, an empty member and a node that is not a CA, naming the flag.
func TestSimMulticastFlag(t *testing.T) {
	o, err := (&Config{Transport: "sim", SimAgents: "none", SimMulticast: []string{"0xc001:H0-0,H1-2,H3-3", "49154:H0-1,H2-0"}}).Open(true)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	eng := ibmad.NewEngine(o.Transport, ibmad.Options{})
	defer eng.Close()
	tr := trace.New(eng, trace.Options{Timeout: 100 * time.Millisecond, Validate: trace.ValidateAgent})
	lid := func(name string) uint16 { return o.Fabric.Node(name).Ports[1].LID }
	for _, c := range []struct {
		mlid   uint16
		member string
		ok     bool
	}{{0xc001, "H3-3", true}, {0xc001, "H1-2", true}, {0xc002, "H2-0", true}, {0xc002, "H3-3", false}, {0xc001, "H2-0", false}} {
		r := tr.TraceMulticast(context.Background(), c.mlid, 0, lid(c.member))
		if got := r.Status == trace.StatusOK; got != c.ok {
			t.Errorf("-m 0x%04x to %s: %s (%v), want ok %v", c.mlid, c.member, r.Status, r.Err, c.ok)
		}
	}
	for flag, want := range map[string]string{
		"0xc001":            "want MLID:MEMBER",
		"0x1:H0-0":          "want 0xC000..0xFFFE",
		"12.5:H0-0":         "not an integer",
		"0xc001:H0-0,,H1-2": "empty member",
		"0xc001:H0-0,L0":    `"L0"`,
		"0xffff:H0-0":       "want 0xC000..0xFFFE",
	} {
		_, err := (&Config{Transport: "sim", SimMulticast: []string{flag}}).OpenFabric()
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--sim.multicast") {
			t.Errorf("--sim.multicast=%s: %v, want an error naming the flag and %q", flag, err, want)
		}
	}
}
