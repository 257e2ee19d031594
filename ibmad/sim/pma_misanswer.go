package sim

import (
	"encoding/binary"
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// PMAMisanswer is a PMA that answers for something other than it was
// asked, as a buggy or confused PMA, or a stale answer, would: the answer
// is well formed, with status 0, but names another attribute or another
// port (docs/protocol.md, "What a PMA answer must match").
type PMAMisanswer struct {
	// Attrs maps an asked attribute to the one answered instead (its
	// layout, and its ID in the answer's header); attributes not in the
	// map are answered as asked.
	Attrs map[ibmad.AttrID]ibmad.AttrID
	// Ports maps an attribute with a PortSelect (PortCounters,
	// PortCountersExtended, PortVLXmitWaitCounters) to the port answered
	// for whatever port the request selects: that port's counters, and
	// its number in the answer's PortSelect. The attribute is the one
	// answered (after Attrs).
	Ports map[ibmad.AttrID]uint8
	// NoPortSelect: the answer of a port-counter attribute carries the
	// asked port's counters but PortSelect 0, as a PMA that fills in
	// the counters only does (docs/protocol.md, "What a PMA answer must
	// match").
	NoPortSelect bool
}

// SetPMAMisanswer makes node's PMA answer as m says (nil: as asked).
func (f *Fabric) SetPMAMisanswer(name string, m *PMAMisanswer) error {
	if n := f.byName[name]; n != nil && m != nil {
		for _, p := range m.Ports {
			if int(p) > n.NumPorts() {
				return fmt.Errorf("sim: %s has no port %d", name, p)
			}
		}
	}
	return f.setPMAFault(name, func(p *pmaFault) { p.misanswer = m })
}

// pmaMisanswer rewrites the request m, before the PMA answers it, into
// what node's misanswering PMA answers instead, and returns what to do to
// the answer once made.
func (n *Node) pmaMisanswer(m *ibmad.MAD) (after func()) {
	after = func() {}
	p := n.pma.Load()
	if p == nil || p.misanswer == nil {
		return after
	}
	if to, ok := p.misanswer.Attrs[m.AttrID()]; ok {
		binary.BigEndian.PutUint16(m[16:], uint16(to))
	}
	switch a := m.AttrID(); a {
	case ibmad.AttrPortCounters, ibmad.AttrPortCountersExtended, ibmad.AttrPortVLXmitWaitCounters:
		if sel, ok := p.misanswer.Ports[a]; ok {
			m.PerfMgtData()[1] = sel
		}
		if p.misanswer.NoPortSelect {
			after = func() { m.PerfMgtData()[1] = 0 }
		}
	}
	return after
}
