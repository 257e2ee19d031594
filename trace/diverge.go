package trace

import (
	"fmt"
	"strings"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// Divergence names the switch whose data plane sent a mismatched hop's
// validation MAD elsewhere than its forwarding table says
// (docs/protocol.md, "Which switch diverged"): the neighbour at the port
// the MAD arrived by, which sent it out of OutPort while its LFT entry
// for the LID asked names LFTPort.
type Divergence struct {
	Switch     ibmad.GUID
	SwitchName string // its site name (NameHops) or description
	OutPort    uint8  // the port it sent the MAD by: toward the hop's actual in port
	LFTPort    uint8  // the port its LFT names for the LID the MAD was addressed to
}

// String is the text form: "L0 (0x...) sent it out of port 7, its LFT
// says port 6".
func (d *Divergence) String() string {
	return fmt.Sprintf("%s (%s) sent it out of port %d, its LFT says port %d", d.SwitchName, d.Switch, d.OutPort, d.LFTPort)
}

// attribute names the switch that diverged for hop h, a mismatch whose
// MAD, addressed to target, arrived at the hop's own node on port
// ActualInPort. The node behind that port sent it: if it is a switch
// whose LFT entry for target names another port, its forwarding diverged
// from its table. Otherwise (a CA behind the port, a switch that
// forwards as programmed, so the MAD reached it off its route: the
// divergence is further back, and one answer cannot say where; or a MAD
// answered by another node than the walk found) the hop is left
// unattributed. It costs a directed-route NodeInfo, the neighbour's LFT
// block and description, unless cached: only on a mismatch.
func (w *walk) attribute(h *Hop, target uint16) {
	h.Diverged = nil
	if h.Agent != AgentMismatch || h.wrongNode || h.ActualInPort == 0 || h.ActualInPort == h.ExpectedInPort ||
		(h.numPorts != 0 && h.ActualInPort > h.numPorts) || len(h.DRPath) >= ibmad.MaxDRHops {
		return
	}
	n, err := w.nodeAtPath(h.DRPath.Extend(h.ActualInPort))
	if err != nil || !n.isSwitch || n.inPort == 0 {
		return
	}
	b, err := w.lftBlock(n.guid, n.path, ibmad.LFTBlockOf(target))
	if err != nil {
		return
	}
	lft := b.Port(target)
	if lft == n.inPort {
		return // it forwards as programmed: the MAD reached it off its route
	}
	d := &Divergence{Switch: n.guid, OutPort: n.inPort, LFTPort: lft}
	if desc, err := w.description(n.guid, n.path); err == nil {
		d.SwitchName = desc
	}
	h.Diverged = d
}

// divergenceText is the hops' diverging switches for a mismatch's message:
// "; diverging switch L0 (0x...), seen at hop 2 S1"; "" when none is
// named.
func divergenceText(hops []Hop) string {
	var parts []string
	for i := range hops {
		if d := hops[i].Diverged; d != nil {
			parts = append(parts, fmt.Sprintf("%s (%s), seen at hop %d %s", d.SwitchName, d.Switch, hops[i].Hop, name(&hops[i])))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "; diverging switch " + strings.Join(parts, "; ")
}

// nameDiverged gives every divergence its switch's site name, when name
// has one.
func nameDiverged(name func(guid uint64) string, hops []Hop) {
	for i := range hops {
		if d := hops[i].Diverged; d != nil {
			if n := name(uint64(d.Switch)); n != "" {
				d.SwitchName = n
			}
		}
	}
}
