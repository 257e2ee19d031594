package ibmad

import (
	"encoding/binary"
	"fmt"
)

// AttrMulticastForwardingTable is the SMP MulticastForwardingTable
// attribute (docs/protocol.md, "MulticastForwardingTable").
const AttrMulticastForwardingTable AttrID = 0x001B

// Multicast LIDs and MFT blocks (docs/protocol.md, "MulticastForwardingTable").
const (
	// MLIDBase is the first multicast LID; entry 0 of block 0 is for it.
	MLIDBase = 0xC000
	// MLIDMax is the last multicast LID (0xFFFF is the permissive LID).
	MLIDMax = 0xFFFE
	// MFTBlockSize is the number of MLIDs in one block.
	MFTBlockSize = 32
	// MFTPortsPerMask is the number of ports one 16-bit mask covers.
	MFTPortsPerMask = 16
	// MFTMaxPosition is the highest port-mask position (ports 240..255).
	MFTMaxPosition = 15
	mftBytes       = MFTBlockSize * 2
)

// MFTBlock is one block of the MulticastForwardingTable: for 32
// consecutive MLIDs, the 16-bit port mask of one position. Bit i of the
// mask at position p is port 16*p + i.
type MFTBlock [MFTBlockSize]uint16

// MFTBlockOf returns the block number holding mlid, which must be a
// multicast LID.
func MFTBlockOf(mlid uint16) uint32 { return uint32(mlid-MLIDBase) / MFTBlockSize }

// MFTModifier returns the attribute modifier that reads the masks of
// mlid at position: the block number in bits 0..8, the position in bits
// 28..31.
func MFTModifier(mlid uint16, position uint8) (uint32, error) {
	if mlid < MLIDBase || mlid > MLIDMax {
		return 0, fmt.Errorf("MulticastForwardingTable: LID 0x%04x is not a multicast LID (0xC000..0xFFFE): %w", mlid, ErrInvalid)
	}
	if position > MFTMaxPosition {
		return 0, fmt.Errorf("MulticastForwardingTable: port-mask position %d above %d: %w", position, MFTMaxPosition, ErrInvalid)
	}
	return MFTBlockOf(mlid) | uint32(position)<<28, nil
}

// MFTPositions is how many port-mask positions cover ports 0..numPorts.
func MFTPositions(numPorts uint8) uint8 { return numPorts/MFTPortsPerMask + 1 }

// MarshalTo writes the 32 masks into b[0:64], big-endian.
func (m *MFTBlock) MarshalTo(b []byte) error {
	if len(b) < mftBytes {
		return errShort("MulticastForwardingTable", mftBytes, len(b))
	}
	for i, v := range m {
		binary.BigEndian.PutUint16(b[2*i:], v)
	}
	return nil
}

// UnmarshalBinary reads 32 masks from b[0:64].
func (m *MFTBlock) UnmarshalBinary(b []byte) error {
	if len(b) < mftBytes {
		return errShort("MulticastForwardingTable", mftBytes, len(b))
	}
	for i := range m {
		m[i] = binary.BigEndian.Uint16(b[2*i:])
	}
	return nil
}

// Mask returns the port mask of mlid, which must lie in this block.
func (m *MFTBlock) Mask(mlid uint16) uint16 { return m[(mlid-MLIDBase)%MFTBlockSize] }

// MFTPorts returns the ports a mask at position selects, in order.
func MFTPorts(mask uint16, position uint8) []uint8 {
	var ports []uint8
	for i := 0; i < MFTPortsPerMask; i++ {
		if mask&(1<<i) != 0 {
			ports = append(ports, position*MFTPortsPerMask+uint8(i))
		}
	}
	return ports
}
