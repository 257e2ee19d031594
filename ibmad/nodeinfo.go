package ibmad

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/internal/fabricstr"
)

// NodeType is NodeInfo.NodeType.
type NodeType uint8

// Node types (IBA 14.2.5.3).
const (
	NodeTypeCA     NodeType = 1
	NodeTypeSwitch NodeType = 2
	NodeTypeRouter NodeType = 3
	NodeTypeRNIC   NodeType = 4
)

// String returns the name ibtracert prints for the type.
func (t NodeType) String() string {
	switch t {
	case NodeTypeCA:
		return "ca"
	case NodeTypeSwitch:
		return "switch"
	case NodeTypeRouter:
		return "router"
	case NodeTypeRNIC:
		return "iwarp rnic"
	}
	return "???"
}

// NodeInfoSize is the size of the NodeInfo attribute.
const NodeInfoSize = 40

// NodeInfo is the SMP NodeInfo attribute (0x0011; docs/protocol.md).
type NodeInfo struct {
	BaseVersion     uint8
	ClassVersion    uint8
	NodeType        NodeType
	NumPorts        uint8
	SystemImageGUID GUID
	NodeGUID        GUID
	PortGUID        GUID // for a switch, port 0's GUID
	PartitionCap    uint16
	DeviceID        uint16
	Revision        uint32
	LocalPortNum    uint8  // the port the SMP arrived on
	VendorID        uint32 // 24 bits
}

// MarshalTo writes the attribute into b[0:40].
func (n *NodeInfo) MarshalTo(b []byte) error {
	if len(b) < NodeInfoSize {
		return errShort("NodeInfo", NodeInfoSize, len(b))
	}
	if n.VendorID > 0xFFFFFF {
		return fmt.Errorf("NodeInfo: VendorID %#x exceeds 24 bits: %w", n.VendorID, ErrInvalid)
	}
	b[0] = n.BaseVersion
	b[1] = n.ClassVersion
	b[2] = uint8(n.NodeType)
	b[3] = n.NumPorts
	binary.BigEndian.PutUint64(b[4:], uint64(n.SystemImageGUID))
	binary.BigEndian.PutUint64(b[12:], uint64(n.NodeGUID))
	binary.BigEndian.PutUint64(b[20:], uint64(n.PortGUID))
	binary.BigEndian.PutUint16(b[28:], n.PartitionCap)
	binary.BigEndian.PutUint16(b[30:], n.DeviceID)
	binary.BigEndian.PutUint32(b[32:], n.Revision)
	b[36] = n.LocalPortNum
	b[37], b[38], b[39] = byte(n.VendorID>>16), byte(n.VendorID>>8), byte(n.VendorID)
	return nil
}

// MarshalBinary returns the 40-byte attribute.
func (n *NodeInfo) MarshalBinary() ([]byte, error) {
	b := make([]byte, NodeInfoSize)
	return b, n.MarshalTo(b)
}

// UnmarshalBinary decodes b[0:40].
func (n *NodeInfo) UnmarshalBinary(b []byte) error {
	if len(b) < NodeInfoSize {
		return errShort("NodeInfo", NodeInfoSize, len(b))
	}
	n.BaseVersion = b[0]
	n.ClassVersion = b[1]
	n.NodeType = NodeType(b[2])
	n.NumPorts = b[3]
	n.SystemImageGUID = GUID(binary.BigEndian.Uint64(b[4:]))
	n.NodeGUID = GUID(binary.BigEndian.Uint64(b[12:]))
	n.PortGUID = GUID(binary.BigEndian.Uint64(b[20:]))
	n.PartitionCap = binary.BigEndian.Uint16(b[28:])
	n.DeviceID = binary.BigEndian.Uint16(b[30:])
	n.Revision = binary.BigEndian.Uint32(b[32:])
	n.LocalPortNum = b[36]
	n.VendorID = uint32(b[37])<<16 | uint32(b[38])<<8 | uint32(b[39])
	return nil
}

// NodeDescriptionSize is the size of the NodeDescription attribute.
const NodeDescriptionSize = 64

// NodeDescription is the SMP NodeDescription attribute (0x0010): a
// NUL-padded UTF-8 string of up to 64 bytes.
type NodeDescription [NodeDescriptionSize]byte

// NewNodeDescription truncates s to 64 bytes.
func NewNodeDescription(s string) (d NodeDescription) {
	copy(d[:], s)
	return d
}

// String returns the description up to the first NUL, as every part of
// the exporter shows it: valid UTF-8, control characters as spaces (as
// ibtracert prints them), bytes that are not UTF-8 as \xNN
// (docs/architecture.md, "Strings from the fabric").
func (d *NodeDescription) String() string {
	n := bytes.IndexByte(d[:], 0)
	if n < 0 {
		n = len(d)
	}
	return fabricstr.Clean(d[:n])
}

// MarshalTo writes the 64 bytes into b.
func (d *NodeDescription) MarshalTo(b []byte) error {
	if len(b) < NodeDescriptionSize {
		return errShort("NodeDescription", NodeDescriptionSize, len(b))
	}
	copy(b, d[:])
	return nil
}

// UnmarshalBinary reads 64 bytes from b.
func (d *NodeDescription) UnmarshalBinary(b []byte) error {
	if len(b) < NodeDescriptionSize {
		return errShort("NodeDescription", NodeDescriptionSize, len(b))
	}
	copy(d[:], b)
	return nil
}
