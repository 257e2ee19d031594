package ibmad

import (
	"encoding/binary"
	"fmt"
)

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
