package ibmad

import "encoding/binary"

// AttrPortVLXmitWaitCounters is the PerfMgt PortVLXmitWaitCounters
// attribute (docs/protocol.md, "PortVLXmitWaitCounters"): the ticks each
// VL of a port had data to send but sent none. It is optional: a PMA that
// lacks it answers a Get with an unsupported-attribute status.
const AttrPortVLXmitWaitCounters AttrID = 0x001C

// NumVLs is the number of VLs a PortVLXmitWaitCounters reading covers
// (VL0-VL14 and VL15).
const NumVLs = 16

// PortVLXmitWaitCountersSize is the size of PortVLXmitWaitCounters.
const PortVLXmitWaitCountersSize = 4 + 2*NumVLs

// PortVLXmitWaitCounters is the PerfMgt PortVLXmitWaitCounters attribute
// (0x001C): PortSelect and CounterSelect as in PortCounters, then one
// 16-bit counter per VL from data byte 4. The counters saturate at all
// ones, as PortCounters' do.
type PortVLXmitWaitCounters struct {
	PortSelect     uint8
	CounterSelect  uint16
	PortVLXmitWait [NumVLs]uint16
}

// MarshalTo writes the attribute into b[0:36].
func (p *PortVLXmitWaitCounters) MarshalTo(b []byte) error {
	if len(b) < PortVLXmitWaitCountersSize {
		return errShort("PortVLXmitWaitCounters", PortVLXmitWaitCountersSize, len(b))
	}
	b[0] = 0
	b[1] = p.PortSelect
	binary.BigEndian.PutUint16(b[2:], p.CounterSelect)
	for vl, v := range p.PortVLXmitWait {
		binary.BigEndian.PutUint16(b[4+2*vl:], v)
	}
	return nil
}

// MarshalBinary returns the 36-byte attribute.
func (p *PortVLXmitWaitCounters) MarshalBinary() ([]byte, error) {
	b := make([]byte, PortVLXmitWaitCountersSize)
	return b, p.MarshalTo(b)
}

// UnmarshalBinary decodes b[0:36].
func (p *PortVLXmitWaitCounters) UnmarshalBinary(b []byte) error {
	if len(b) < PortVLXmitWaitCountersSize {
		return errShort("PortVLXmitWaitCounters", PortVLXmitWaitCountersSize, len(b))
	}
	p.PortSelect = b[1]
	p.CounterSelect = binary.BigEndian.Uint16(b[2:])
	for vl := range p.PortVLXmitWait {
		p.PortVLXmitWait[vl] = binary.BigEndian.Uint16(b[4+2*vl:])
	}
	return nil
}
