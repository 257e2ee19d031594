package ibmad

import (
	"encoding/binary"
	"fmt"
)

// SwitchInfoSize is the size of the SwitchInfo attribute.
const SwitchInfoSize = 20

// SwitchInfo is the SMP SwitchInfo attribute (0x0012; docs/protocol.md).
type SwitchInfo struct {
	LinearFDBCap                   uint16
	RandomFDBCap                   uint16
	MulticastFDBCap                uint16
	LinearFDBTop                   uint16
	DefaultPort                    uint8
	DefaultMulticastPrimaryPort    uint8
	DefaultMulticastNotPrimaryPort uint8
	LifeTimeValue                  uint8 // 5
	PortStateChange                bool
	OptimizedSLtoVLMapping         uint8 // 2
	LIDsPerPort                    uint16
	PartitionEnforcementCap        uint16
	InboundEnforcementCap          bool
	OutboundEnforcementCap         bool
	FilterRawInboundCap            bool
	FilterRawOutboundCap           bool
	EnhancedPort0                  bool
	MulticastFDBTop                uint16
}

// MarshalTo writes the attribute into b[0:20].
func (s *SwitchInfo) MarshalTo(b []byte) error {
	if len(b) < SwitchInfoSize {
		return errShort("SwitchInfo", SwitchInfoSize, len(b))
	}
	if s.LifeTimeValue > 0x1f || s.OptimizedSLtoVLMapping > 3 {
		return fmt.Errorf("SwitchInfo: LifeTimeValue %d or OptimizedSLtoVLMapping %d too wide: %w",
			s.LifeTimeValue, s.OptimizedSLtoVLMapping, ErrInvalid)
	}
	binary.BigEndian.PutUint16(b[0:], s.LinearFDBCap)
	binary.BigEndian.PutUint16(b[2:], s.RandomFDBCap)
	binary.BigEndian.PutUint16(b[4:], s.MulticastFDBCap)
	binary.BigEndian.PutUint16(b[6:], s.LinearFDBTop)
	b[8] = s.DefaultPort
	b[9] = s.DefaultMulticastPrimaryPort
	b[10] = s.DefaultMulticastNotPrimaryPort
	b[11] = s.LifeTimeValue<<3 | b2u(s.PortStateChange)<<2 | s.OptimizedSLtoVLMapping
	binary.BigEndian.PutUint16(b[12:], s.LIDsPerPort)
	binary.BigEndian.PutUint16(b[14:], s.PartitionEnforcementCap)
	b[16] = b2u(s.InboundEnforcementCap)<<7 | b2u(s.OutboundEnforcementCap)<<6 |
		b2u(s.FilterRawInboundCap)<<5 | b2u(s.FilterRawOutboundCap)<<4 | b2u(s.EnhancedPort0)<<3
	b[17] = 0
	binary.BigEndian.PutUint16(b[18:], s.MulticastFDBTop)
	return nil
}

// UnmarshalBinary decodes b[0:20].
func (s *SwitchInfo) UnmarshalBinary(b []byte) error {
	if len(b) < SwitchInfoSize {
		return errShort("SwitchInfo", SwitchInfoSize, len(b))
	}
	s.LinearFDBCap = binary.BigEndian.Uint16(b[0:])
	s.RandomFDBCap = binary.BigEndian.Uint16(b[2:])
	s.MulticastFDBCap = binary.BigEndian.Uint16(b[4:])
	s.LinearFDBTop = binary.BigEndian.Uint16(b[6:])
	s.DefaultPort = b[8]
	s.DefaultMulticastPrimaryPort = b[9]
	s.DefaultMulticastNotPrimaryPort = b[10]
	s.LifeTimeValue = b[11] >> 3
	s.PortStateChange = b[11]&0x4 != 0
	s.OptimizedSLtoVLMapping = b[11] & 0x3
	s.LIDsPerPort = binary.BigEndian.Uint16(b[12:])
	s.PartitionEnforcementCap = binary.BigEndian.Uint16(b[14:])
	s.InboundEnforcementCap = b[16]&0x80 != 0
	s.OutboundEnforcementCap = b[16]&0x40 != 0
	s.FilterRawInboundCap = b[16]&0x20 != 0
	s.FilterRawOutboundCap = b[16]&0x10 != 0
	s.EnhancedPort0 = b[16]&0x08 != 0
	s.MulticastFDBTop = binary.BigEndian.Uint16(b[18:])
	return nil
}

// LFTBlockSize is the number of LIDs in one LinearForwardingTable block.
const LFTBlockSize = 64

// LFTNoRoute is the LFT entry for an unassigned LID.
const LFTNoRoute = 0xFF

// LFTBlock is one block of the SMP LinearForwardingTable attribute
// (0x0019; docs/protocol.md): the egress port for LIDs 64*block .. 64*block+63.
// The attribute modifier is the block number, LID / 64.
type LFTBlock [LFTBlockSize]uint8

// LFTBlockOf returns the block number holding lid.
func LFTBlockOf(lid uint16) uint32 { return uint32(lid) / LFTBlockSize }

// MarshalTo writes the 64 entries into b.
func (l *LFTBlock) MarshalTo(b []byte) error {
	if len(b) < LFTBlockSize {
		return errShort("LinearForwardingTable", LFTBlockSize, len(b))
	}
	copy(b, l[:])
	return nil
}

// MarshalBinary returns the block as 64 bytes.
func (l *LFTBlock) MarshalBinary() ([]byte, error) {
	b := make([]byte, LFTBlockSize)
	return b, l.MarshalTo(b)
}

// UnmarshalBinary reads 64 entries from b.
func (l *LFTBlock) UnmarshalBinary(b []byte) error {
	if len(b) < LFTBlockSize {
		return errShort("LinearForwardingTable", LFTBlockSize, len(b))
	}
	copy(l[:], b)
	return nil
}

// Port returns the egress port for lid, which must lie in this block.
func (l *LFTBlock) Port(lid uint16) uint8 { return l[lid%LFTBlockSize] }
