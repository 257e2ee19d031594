package ibmad

import (
	"encoding/binary"
	"fmt"
)

// The subnet administration class (SA): its MAD header and the records
// the tracer reads, one at a time (PathRecord, NodeRecord) or in tables
// (GetTable: LFTRecord, LinkRecord, PortInfoRecord, SwitchInfoRecord).

// SAMAD is a subnet administration MAD (class 0x03, class version 2;
// IBA 15.2.1; docs/protocol.md, "SA queries").
type SAMAD struct {
	Header
	RMPP          RMPPHeader
	SMKey         uint64
	AttrOffset    uint16 // record size in 8-byte units (GetTable responses)
	ComponentMask uint64
	Data          [SADataSize]byte
}

// SA ComponentMask bits for PathRecord (IBA 15.2.5.16); sa_cgo_test.go
// checks them against OpenSM's IB_PR_COMPMASK_*.
const (
	PRCompDGID     uint64 = 1 << 2
	PRCompSGID     uint64 = 1 << 3
	PRCompDLID     uint64 = 1 << 4
	PRCompSLID     uint64 = 1 << 5
	PRCompNumbPath uint64 = 1 << 12
)

// SA ComponentMask bits for NodeRecord (IBA 15.2.5.2): bit n is the n-th
// field of the record, reserved fields counted: 0 LID, 1 reserved, then
// NodeInfo's fields in order (2 BaseVersion ... 7 NodeGUID, 8 PortGUID, ...,
// 12 LocalPortNum, 13 VendorID), 14 NodeDescription. sa_cgo_test.go checks
// them against OpenSM's IB_NR_COMPMASK_*.
const (
	NRCompLID          uint64 = 1 << 0
	NRCompNodeGUID     uint64 = 1 << 7
	NRCompPortGUID     uint64 = 1 << 8
	NRCompLocalPortNum uint64 = 1 << 12
	NRCompNodeDesc     uint64 = 1 << 14
)

// NewSAGet returns an SA Get request for attr with component mask mask.
func NewSAGet(attr AttrID, mask uint64) *SAMAD {
	return &SAMAD{Header: Header{BaseVersion: 1, MgmtClass: ClassSubnAdm, ClassVersion: 2,
		Method: MethodGet, AttrID: attr}, ComponentMask: mask}
}

// MarshalTo writes the SA MAD into b (at least 256 bytes).
func (s *SAMAD) MarshalTo(b []byte) error {
	if len(b) < MADSize {
		return errShort("SA MAD", MADSize, len(b))
	}
	if err := s.Header.MarshalTo(b); err != nil {
		return err
	}
	s.RMPP.marshalTo(b)
	binary.BigEndian.PutUint64(b[36:], s.SMKey)
	binary.BigEndian.PutUint16(b[44:], s.AttrOffset)
	b[46], b[47] = 0, 0
	binary.BigEndian.PutUint64(b[48:], s.ComponentMask)
	copy(b[56:], s.Data[:])
	return nil
}

// PathRecordSize is the size of the SA PathRecord attribute.
const PathRecordSize = 64

// PathRecord is the SA PathRecord attribute (0x0035; docs/protocol.md).
type PathRecord struct {
	ServiceID              uint64
	DGID                   GID
	SGID                   GID
	DLID                   uint16
	SLID                   uint16
	RawTraffic             bool
	FlowLabel              uint32 // 20
	HopLimit               uint8
	TClass                 uint8
	Reversible             bool
	NumbPath               uint8 // 7
	PKey                   uint16
	QoSClass               uint16 // 12
	SL                     uint8  // 4
	MTUSelector            uint8  // 2
	MTU                    uint8  // 6
	RateSelector           uint8  // 2
	Rate                   uint8  // 6
	PacketLifeTimeSelector uint8  // 2
	PacketLifeTime         uint8  // 6
	Preference             uint8
}

// MarshalTo writes the attribute into b[0:64].
func (p *PathRecord) MarshalTo(b []byte) error {
	if len(b) < PathRecordSize {
		return errShort("PathRecord", PathRecordSize, len(b))
	}
	if p.FlowLabel >= 1<<20 || p.NumbPath > 0x7f || p.QoSClass >= 1<<12 || p.SL > 0xf ||
		p.MTUSelector > 3 || p.MTU > 0x3f || p.RateSelector > 3 || p.Rate > 0x3f ||
		p.PacketLifeTimeSelector > 3 || p.PacketLifeTime > 0x3f {
		return fmt.Errorf("PathRecord: a field exceeds its width: %w", ErrInvalid)
	}
	binary.BigEndian.PutUint64(b[0:], p.ServiceID)
	copy(b[8:24], p.DGID[:])
	copy(b[24:40], p.SGID[:])
	binary.BigEndian.PutUint16(b[40:], p.DLID)
	binary.BigEndian.PutUint16(b[42:], p.SLID)
	binary.BigEndian.PutUint32(b[44:], uint32(b2u(p.RawTraffic))<<31|p.FlowLabel<<8|uint32(p.HopLimit))
	b[48] = p.TClass
	b[49] = b2u(p.Reversible)<<7 | p.NumbPath
	binary.BigEndian.PutUint16(b[50:], p.PKey)
	binary.BigEndian.PutUint16(b[52:], p.QoSClass<<4|uint16(p.SL))
	b[54] = p.MTUSelector<<6 | p.MTU
	b[55] = p.RateSelector<<6 | p.Rate
	b[56] = p.PacketLifeTimeSelector<<6 | p.PacketLifeTime
	b[57] = p.Preference
	clear(b[58:64])
	return nil
}

// MarshalBinary returns the 64-byte attribute.
func (p *PathRecord) MarshalBinary() ([]byte, error) {
	b := make([]byte, PathRecordSize)
	return b, p.MarshalTo(b)
}

// UnmarshalBinary decodes b[0:64].
func (p *PathRecord) UnmarshalBinary(b []byte) error {
	if len(b) < PathRecordSize {
		return errShort("PathRecord", PathRecordSize, len(b))
	}
	p.ServiceID = binary.BigEndian.Uint64(b[0:])
	copy(p.DGID[:], b[8:24])
	copy(p.SGID[:], b[24:40])
	p.DLID = binary.BigEndian.Uint16(b[40:])
	p.SLID = binary.BigEndian.Uint16(b[42:])
	v := binary.BigEndian.Uint32(b[44:])
	p.RawTraffic = v>>31 != 0
	p.FlowLabel = (v >> 8) & 0xfffff
	p.HopLimit = uint8(v)
	p.TClass = b[48]
	p.Reversible = b[49]&0x80 != 0
	p.NumbPath = b[49] & 0x7f
	p.PKey = binary.BigEndian.Uint16(b[50:])
	q := binary.BigEndian.Uint16(b[52:])
	p.QoSClass, p.SL = q>>4, uint8(q&0xf)
	p.MTUSelector, p.MTU = b[54]>>6, b[54]&0x3f
	p.RateSelector, p.Rate = b[55]>>6, b[55]&0x3f
	p.PacketLifeTimeSelector, p.PacketLifeTime = b[56]>>6, b[56]&0x3f
	p.Preference = b[57]
	return nil
}

// NodeRecordSize is the size of the SA NodeRecord attribute: LID,
// 2 reserved bytes, NodeInfo and NodeDescription (IBA 15.2.5.2).
const NodeRecordSize = 4 + NodeInfoSize + NodeDescriptionSize

// NodeRecord is the SA NodeRecord attribute (0x0011).
type NodeRecord struct {
	LID             uint16
	NodeInfo        NodeInfo
	NodeDescription NodeDescription
}

// MarshalTo writes the record into b[0:108].
func (n *NodeRecord) MarshalTo(b []byte) error {
	if len(b) < NodeRecordSize {
		return errShort("NodeRecord", NodeRecordSize, len(b))
	}
	binary.BigEndian.PutUint16(b[0:], n.LID)
	b[2], b[3] = 0, 0
	if err := n.NodeInfo.MarshalTo(b[4:]); err != nil {
		return fmt.Errorf("NodeRecord: %w", err)
	}
	return n.NodeDescription.MarshalTo(b[4+NodeInfoSize:])
}

// MarshalBinary returns the 108-byte record.
func (n *NodeRecord) MarshalBinary() ([]byte, error) {
	b := make([]byte, NodeRecordSize)
	return b, n.MarshalTo(b)
}

// UnmarshalBinary decodes b[0:108].
func (n *NodeRecord) UnmarshalBinary(b []byte) error {
	if len(b) < NodeRecordSize {
		return errShort("NodeRecord", NodeRecordSize, len(b))
	}
	n.LID = binary.BigEndian.Uint16(b[0:])
	if err := n.NodeInfo.UnmarshalBinary(b[4:]); err != nil {
		return err
	}
	return n.NodeDescription.UnmarshalBinary(b[4+NodeInfoSize:])
}

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

// MarshalBinary returns the 24-byte record: the template of ibmad/sa's
// record tables (sa.Table).
func (r *SwitchInfoRecord) MarshalBinary() ([]byte, error) {
	b := make([]byte, SwitchInfoRecordSize)
	return b, r.MarshalTo(b)
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

// MarshalBinary returns the SA MAD as 256 bytes.
func (s *SAMAD) MarshalBinary() ([]byte, error) {
	b := make([]byte, MADSize)
	return b, s.MarshalTo(b)
}

// UnmarshalBinary decodes a 256-byte SA MAD.
func (s *SAMAD) UnmarshalBinary(b []byte) error {
	if len(b) < MADSize {
		return errShort("SA MAD", MADSize, len(b))
	}
	if err := s.Header.UnmarshalBinary(b); err != nil {
		return err
	}
	if s.MgmtClass != ClassSubnAdm {
		return fmt.Errorf("SA MAD: class %s: %w", s.MgmtClass, ErrInvalid)
	}
	s.RMPP.unmarshal(b)
	s.SMKey = binary.BigEndian.Uint64(b[36:])
	s.AttrOffset = binary.BigEndian.Uint16(b[44:])
	s.ComponentMask = binary.BigEndian.Uint64(b[48:])
	copy(s.Data[:], b[56:])
	return nil
}
