package ibmad

import (
	"encoding/binary"
)

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
