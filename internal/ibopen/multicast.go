package ibopen

import (
	"fmt"
	"strings"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/internal/strictint"
)

// simGroup is one --sim.multicast group: its MLID and member CAs.
type simGroup struct {
	mlid    uint16
	members []string
}

// parseSimGroup reads MLID:MEMBER,MEMBER,... (the MLID in 0xC000..0xFFFE,
// hex with 0x or decimal; members are CA names of the simulated fabric).
func parseSimGroup(s string) (simGroup, error) {
	mlidText, list, ok := strings.Cut(s, ":")
	if !ok || list == "" {
		return simGroup{}, fmt.Errorf("--sim.multicast %q: want MLID:MEMBER,MEMBER,... (for example 0xc001:H0-0,H3-3)", s)
	}
	v, err := strictint.Parse(mlidText)
	if err != nil {
		return simGroup{}, fmt.Errorf("--sim.multicast %q: MLID %s", s, strictint.Message(mlidText, err))
	}
	if !strictint.InRange(v, ibmad.MLIDBase, ibmad.MLIDMax) {
		return simGroup{}, fmt.Errorf("--sim.multicast %q: MLID %s: want 0xC000..0xFFFE", s, mlidText)
	}
	g := simGroup{mlid: uint16(v.Uint64())}
	for _, m := range strings.Split(list, ",") {
		if m = strings.TrimSpace(m); m == "" {
			return simGroup{}, fmt.Errorf("--sim.multicast %q: an empty member name", s)
		}
		g.members = append(g.members, m)
	}
	return g, nil
}

// programGroups programs the MFTs of every --sim.multicast group on f,
// as an SM does once the members have joined (sim.SetMulticastGroup).
func programGroups(f *sim.Fabric, groups []string) error {
	for _, s := range groups {
		g, err := parseSimGroup(s)
		if err != nil {
			return err
		}
		if err := f.SetMulticastGroup(g.mlid, g.members...); err != nil {
			return fmt.Errorf("--sim.multicast %q: %w", s, err)
		}
	}
	return nil
}
