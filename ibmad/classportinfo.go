package ibmad

import (
	"encoding/binary"
	"fmt"
)

// ClassPortInfoSize is the size of the ClassPortInfo attribute.
const ClassPortInfoSize = 72

// Generic ClassPortInfo CapabilityMask bits (IBA 13.4.8.1).
const (
	CPICapTrap        uint16 = 1 << 0
	CPICapGetSet      uint16 = 1 << 1
	CPICapCapMask2    uint16 = 1 << 2
	CPICapPMAllPort   uint16 = 1 << 8  // PerfMgt: AllPortSelect
	CPICapPMExtWidth  uint16 = 1 << 9  // PerfMgt: PortCountersExtended supported
	CPICapPMExtNoIETF uint16 = 1 << 10 // PerfMgt: extended width, no IETF
	CPICapPMXmitWait  uint16 = 1 << 12 // PerfMgt: PortXmitWait supported
	CPICapPMRSFEC     uint16 = 1 << 14 // PerfMgt: PortExtendedSpeedsCounters has an RS-FEC layout

	// CPICap2PMAddlPortCtrsExt is CapabilityMask2 bit 1 of the PerfMgt
	// class: the additional PortCountersExtended fields are supported.
	CPICap2PMAddlPortCtrsExt uint32 = 1 << 1
)

// ClassPortInfo is the ClassPortInfo attribute of any GS class (0x0001;
// docs/protocol.md).
type ClassPortInfo struct {
	BaseVersion     uint8
	ClassVersion    uint8
	CapabilityMask  uint16
	CapabilityMask2 uint32 // 27 bits
	RespTimeValue   uint8  // 5 bits
	RedirectGID     GID
	RedirectTC      uint8
	RedirectSL      uint8  // 4
	RedirectFL      uint32 // 20
	RedirectLID     uint16
	RedirectPKey    uint16
	RedirectQP      uint32 // 24
	RedirectQKey    uint32
	TrapGID         GID
	TrapTC          uint8
	TrapSL          uint8  // 4
	TrapFL          uint32 // 20
	TrapLID         uint16
	TrapPKey        uint16
	TrapHL          uint8
	TrapQP          uint32 // 24
	TrapQKey        uint32
}

// MarshalTo writes the attribute into b[0:72].
func (c *ClassPortInfo) MarshalTo(b []byte) error {
	if len(b) < ClassPortInfoSize {
		return errShort("ClassPortInfo", ClassPortInfoSize, len(b))
	}
	if c.CapabilityMask2 >= 1<<27 || c.RespTimeValue > 0x1f || c.RedirectSL > 0xf || c.RedirectFL >= 1<<20 ||
		c.RedirectQP >= 1<<24 || c.TrapSL > 0xf || c.TrapFL >= 1<<20 || c.TrapQP >= 1<<24 {
		return fmt.Errorf("ClassPortInfo: a field exceeds its width: %w", ErrInvalid)
	}
	b[0] = c.BaseVersion
	b[1] = c.ClassVersion
	binary.BigEndian.PutUint16(b[2:], c.CapabilityMask)
	binary.BigEndian.PutUint32(b[4:], c.CapabilityMask2<<5|uint32(c.RespTimeValue))
	copy(b[8:24], c.RedirectGID[:])
	b[24] = c.RedirectTC
	put24(b[25:], uint32(c.RedirectSL)<<20|c.RedirectFL)
	binary.BigEndian.PutUint16(b[28:], c.RedirectLID)
	binary.BigEndian.PutUint16(b[30:], c.RedirectPKey)
	b[32] = 0
	put24(b[33:], c.RedirectQP)
	binary.BigEndian.PutUint32(b[36:], c.RedirectQKey)
	copy(b[40:56], c.TrapGID[:])
	b[56] = c.TrapTC
	put24(b[57:], uint32(c.TrapSL)<<20|c.TrapFL)
	binary.BigEndian.PutUint16(b[60:], c.TrapLID)
	binary.BigEndian.PutUint16(b[62:], c.TrapPKey)
	b[64] = c.TrapHL
	put24(b[65:], c.TrapQP)
	binary.BigEndian.PutUint32(b[68:], c.TrapQKey)
	return nil
}

// MarshalBinary returns the 72-byte attribute.
func (c *ClassPortInfo) MarshalBinary() ([]byte, error) {
	b := make([]byte, ClassPortInfoSize)
	return b, c.MarshalTo(b)
}

// UnmarshalBinary decodes b[0:72].
func (c *ClassPortInfo) UnmarshalBinary(b []byte) error {
	if len(b) < ClassPortInfoSize {
		return errShort("ClassPortInfo", ClassPortInfoSize, len(b))
	}
	c.BaseVersion = b[0]
	c.ClassVersion = b[1]
	c.CapabilityMask = binary.BigEndian.Uint16(b[2:])
	v := binary.BigEndian.Uint32(b[4:])
	c.CapabilityMask2, c.RespTimeValue = v>>5, uint8(v&0x1f)
	copy(c.RedirectGID[:], b[8:24])
	c.RedirectTC = b[24]
	v = get24(b[25:])
	c.RedirectSL, c.RedirectFL = uint8(v>>20), v&0xfffff
	c.RedirectLID = binary.BigEndian.Uint16(b[28:])
	c.RedirectPKey = binary.BigEndian.Uint16(b[30:])
	c.RedirectQP = get24(b[33:])
	c.RedirectQKey = binary.BigEndian.Uint32(b[36:])
	copy(c.TrapGID[:], b[40:56])
	c.TrapTC = b[56]
	v = get24(b[57:])
	c.TrapSL, c.TrapFL = uint8(v>>20), v&0xfffff
	c.TrapLID = binary.BigEndian.Uint16(b[60:])
	c.TrapPKey = binary.BigEndian.Uint16(b[62:])
	c.TrapHL = b[64]
	c.TrapQP = get24(b[65:])
	c.TrapQKey = binary.BigEndian.Uint32(b[68:])
	return nil
}

func put24(b []byte, v uint32) { b[0], b[1], b[2] = byte(v>>16), byte(v>>8), byte(v) }
func get24(b []byte) uint32    { return uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]) }
