package ibmad

import (
	"encoding/binary"
	"fmt"
)

// SA attribute IDs of the records GetTable reads (IBA 15.2.5);
// sa_cgo_test.go checks them against OpenSM's IB_MAD_ATTR_*.
const (
	AttrPortInfoRecord   AttrID = 0x0012 // SA
	AttrSwitchInfoRecord AttrID = 0x0014 // SA
	AttrLFTRecord        AttrID = 0x0015 // SA LinearForwardingTableRecord
	AttrLinkRecord       AttrID = 0x0020 // SA
)

// Record sizes on the wire. An SA pads each record of a table to its
// AttributeOffset (8-byte units): NodeRecord 108 → 112, PortInfoRecord
// 68 → 72, LinkRecord 6 → 8; sa_cgo_test.go checks the padded sizes
// against OpenSM's structs.
const (
	LFTRecordSize        = 8 + LFTBlockSize // LID, block, 4 reserved, 64 ports
	LinkRecordSize       = 6
	PortInfoRecordSize   = 4 + PortInfoSize
	SwitchInfoRecordSize = 4 + SwitchInfoSize
)

// Component mask bits (IBA 15.2.5.x: bit n is the record's n-th field,
// reserved fields counted); sa_cgo_test.go checks them against OpenSM's
// IB_*_COMPMASK_*.
const (
	LFTRCompLID   uint64 = 1 << 0
	LFTRCompBlock uint64 = 1 << 1

	LRCompFromLID  uint64 = 1 << 0
	LRCompFromPort uint64 = 1 << 1
	LRCompToPort   uint64 = 1 << 2
	LRCompToLID    uint64 = 1 << 3

	PIRCompLID     uint64 = 1 << 0
	PIRCompPortNum uint64 = 1 << 1
	PIRCompOptions uint64 = 1 << 2

	SWIRCompLID uint64 = 1 << 0
)

// LFTRecord is the SA LinearForwardingTableRecord (0x0015): one 64-LID
// block of a switch's linear forwarding table.
type LFTRecord struct {
	LID   uint16 // the switch's
	Block uint16 // LIDs Block*64 .. Block*64+63
	LFT   LFTBlock
}

// MarshalTo writes the record into b[0:72].
func (r *LFTRecord) MarshalTo(b []byte) error {
	if len(b) < LFTRecordSize {
		return errShort("LFTRecord", LFTRecordSize, len(b))
	}
	binary.BigEndian.PutUint16(b[0:], r.LID)
	binary.BigEndian.PutUint16(b[2:], r.Block)
	clear(b[4:8])
	copy(b[8:], r.LFT[:])
	return nil
}

// MarshalBinary returns the 72-byte record.
func (r *LFTRecord) MarshalBinary() ([]byte, error) {
	b := make([]byte, LFTRecordSize)
	return b, r.MarshalTo(b)
}

// UnmarshalBinary decodes b[0:72].
func (r *LFTRecord) UnmarshalBinary(b []byte) error {
	if len(b) < LFTRecordSize {
		return errShort("LFTRecord", LFTRecordSize, len(b))
	}
	r.LID = binary.BigEndian.Uint16(b[0:])
	r.Block = binary.BigEndian.Uint16(b[2:])
	copy(r.LFT[:], b[8:])
	return nil
}

// LinkRecord is the SA LinkRecord (0x0020): one direction of a link.
type LinkRecord struct {
	FromLID  uint16
	FromPort uint8
	ToPort   uint8
	ToLID    uint16
}

// MarshalTo writes the record into b[0:6].
func (r *LinkRecord) MarshalTo(b []byte) error {
	if len(b) < LinkRecordSize {
		return errShort("LinkRecord", LinkRecordSize, len(b))
	}
	binary.BigEndian.PutUint16(b[0:], r.FromLID)
	b[2], b[3] = r.FromPort, r.ToPort
	binary.BigEndian.PutUint16(b[4:], r.ToLID)
	return nil
}

// MarshalBinary returns the 6-byte record.
func (r *LinkRecord) MarshalBinary() ([]byte, error) {
	b := make([]byte, LinkRecordSize)
	return b, r.MarshalTo(b)
}

// UnmarshalBinary decodes b[0:6].
func (r *LinkRecord) UnmarshalBinary(b []byte) error {
	if len(b) < LinkRecordSize {
		return errShort("LinkRecord", LinkRecordSize, len(b))
	}
	r.FromLID = binary.BigEndian.Uint16(b[0:])
	r.FromPort, r.ToPort = b[2], b[3]
	r.ToLID = binary.BigEndian.Uint16(b[4:])
	return nil
}

// PortInfoRecord is the SA PortInfoRecord (0x0012): a port's PortInfo as
// the SM last read it. A switch's records all carry the switch's LID.
type PortInfoRecord struct {
	LID      uint16 // EndPortLID
	PortNum  uint8
	Options  uint8
	PortInfo PortInfo
}

// MarshalTo writes the record into b[0:68].
func (r *PortInfoRecord) MarshalTo(b []byte) error {
	if len(b) < PortInfoRecordSize {
		return errShort("PortInfoRecord", PortInfoRecordSize, len(b))
	}
	binary.BigEndian.PutUint16(b[0:], r.LID)
	b[2], b[3] = r.PortNum, r.Options
	if err := r.PortInfo.MarshalTo(b[4:]); err != nil {
		return fmt.Errorf("PortInfoRecord: %w", err)
	}
	return nil
}

// MarshalBinary returns the 68-byte record.
func (r *PortInfoRecord) MarshalBinary() ([]byte, error) {
	b := make([]byte, PortInfoRecordSize)
	return b, r.MarshalTo(b)
}

// UnmarshalBinary decodes b[0:68].
func (r *PortInfoRecord) UnmarshalBinary(b []byte) error {
	if len(b) < PortInfoRecordSize {
		return errShort("PortInfoRecord", PortInfoRecordSize, len(b))
	}
	r.LID = binary.BigEndian.Uint16(b[0:])
	r.PortNum, r.Options = b[2], b[3]
	return r.PortInfo.UnmarshalBinary(b[4:])
}

// SwitchInfoRecord is the SA SwitchInfoRecord (0x0014).
type SwitchInfoRecord struct {
	LID        uint16
	SwitchInfo SwitchInfo
}

// MarshalTo writes the record into b[0:24].
func (r *SwitchInfoRecord) MarshalTo(b []byte) error {
	if len(b) < SwitchInfoRecordSize {
		return errShort("SwitchInfoRecord", SwitchInfoRecordSize, len(b))
	}
	binary.BigEndian.PutUint16(b[0:], r.LID)
	b[2], b[3] = 0, 0
	if err := r.SwitchInfo.MarshalTo(b[4:]); err != nil {
		return fmt.Errorf("SwitchInfoRecord: %w", err)
	}
	return nil
}

// UnmarshalBinary decodes b[0:24].
func (r *SwitchInfoRecord) UnmarshalBinary(b []byte) error {
	if len(b) < SwitchInfoRecordSize {
		return errShort("SwitchInfoRecord", SwitchInfoRecordSize, len(b))
	}
	r.LID = binary.BigEndian.Uint16(b[0:])
	return r.SwitchInfo.UnmarshalBinary(b[4:])
}

// AttrOffsetOf returns the AttributeOffset (8-byte units) an SA uses for
// a record of size bytes.
func AttrOffsetOf(size int) uint16 { return uint16((size + 7) / 8) }
