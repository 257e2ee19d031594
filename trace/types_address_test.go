package trace

import (
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// Args and Address write every kind of destination, one as ibtracer's
// flags, one as the labels and logs show it.
func TestDestinationArgsAndAddress(t *testing.T) {
	gid, _ := ibmad.ParseGID("fe80::2:c903:a1:b2c4")
	for _, c := range []struct {
		d             Destination
		args, address string
	}{
		{Destination{LID: 17}, "-l 17", "lid 17"},
		{Destination{GID: gid}, "-g fe80:0000:0000:0000:0002:c903:00a1:b2c4", "gid fe80:0000:0000:0000:0002:c903:00a1:b2c4"},
		{Destination{GUID: 0x0002c90300a1b2c3}, "-G 0x0002c90300a1b2c3", "guid 0x0002c90300a1b2c3"},
		{Destination{Node: `compute042 "mlx5_0"`}, `--node "compute042 \"mlx5_0\""`, `node "compute042 \"mlx5_0\""`},
		{Destination{Node: "c1", Port: 2}, `--node "c1" --port 2`, `node "c1" port 2`},
		{Destination{}, "", "(none)"},
	} {
		if got := c.d.Args(); got != c.args {
			t.Errorf("%+v: Args %q, want %q", c.d, got, c.args)
		}
		if got := c.d.Address(); got != c.address {
			t.Errorf("%+v: Address %q, want %q", c.d, got, c.address)
		}
	}
}
