package ibmad

import (
	"encoding/binary"
	"fmt"
)

// PermissiveLID is the LID used for directed-route SMPs and as DrSLID/DrDLID
// when the whole path is directed (IBA 14.2.2).
const PermissiveLID = 0xFFFF

// MaxDRHops is the longest directed route an SMP can carry (IBA 14.2.2: 64
// path bytes, byte 0 unused).
const MaxDRHops = 63

// DRPath is a directed route: the egress port at each hop, starting at the
// local port. DRPath{} is the local node itself.
type DRPath []uint8

func (p DRPath) String() string {
	s := "0"
	for _, port := range p {
		s += fmt.Sprintf(",%d", port)
	}
	return s
}

// Extend returns p with port appended, without modifying p's backing array.
func (p DRPath) Extend(port uint8) DRPath {
	q := make(DRPath, len(p)+1)
	copy(q, p)
	q[len(p)] = port
	return q
}

// SMP is a subnet management packet, LID-routed (class 0x01) or directed
// route (class 0x81) (IBA 14.2.1, docs/protocol.md).
type SMP struct {
	Header
	// Directed route only. HopPointer and HopCount live in ClassSpecific and
	// D in Status bit 15 on the wire; Marshal and Unmarshal move them.
	HopPointer uint8
	HopCount   uint8
	Direction  bool // D bit: set in responses travelling back to the requester
	MKey       uint64
	DrSLID     uint16
	DrDLID     uint16
	Data       [SMPDataSize]byte
	// InitialPath[i] is the egress port at hop i (index 0 unused).
	InitialPath [64]byte
	// ReturnPath[i] is the ingress port recorded at hop i.
	ReturnPath [64]byte
}

// NewDRGet returns a directed-route Get SMP for attribute attr along path,
// built as libibmad builds it (DrSLID = DrDLID = permissive, HopPointer 0).
func NewDRGet(attr AttrID, mod uint32, path DRPath) (*SMP, error) {
	s := &SMP{}
	if err := s.InitDRGet(attr, mod, path); err != nil {
		return nil, err
	}
	return s, nil
}

// InitDRGet fills s as a directed-route Get along path, like NewDRGet.
func (s *SMP) InitDRGet(attr AttrID, mod uint32, path DRPath) error {
	if len(path) > MaxDRHops {
		return fmt.Errorf("directed route of %d hops exceeds %d: %w", len(path), MaxDRHops, ErrInvalid)
	}
	*s = SMP{}
	s.BaseVersion = 1
	s.MgmtClass = ClassSubnDR
	s.ClassVersion = 1
	s.Method = MethodGet
	s.AttrID = attr
	s.AttrMod = mod
	s.HopCount = uint8(len(path))
	s.DrSLID = PermissiveLID
	s.DrDLID = PermissiveLID
	copy(s.InitialPath[1:], path)
	return nil
}

// NewLIDGet returns a LID-routed Get SMP.
func NewLIDGet(attr AttrID, mod uint32) *SMP {
	return &SMP{Header: Header{BaseVersion: 1, MgmtClass: ClassSubnLID, ClassVersion: 1,
		Method: MethodGet, AttrID: attr, AttrMod: mod}}
}

// MarshalTo writes the SMP into b (at least 256 bytes).
func (s *SMP) MarshalTo(b []byte) error {
	if len(b) < MADSize {
		return errShort("SMP", MADSize, len(b))
	}
	h := s.Header
	if s.MgmtClass == ClassSubnDR {
		h.Status &^= StatusDirection
		if s.Direction {
			h.Status |= StatusDirection
		}
		h.ClassSpecific = uint16(s.HopPointer)<<8 | uint16(s.HopCount)
	}
	if err := h.MarshalTo(b); err != nil {
		return err
	}
	binary.BigEndian.PutUint64(b[24:], s.MKey)
	clear(b[32:64])
	clear(b[128:256])
	if s.MgmtClass == ClassSubnDR {
		binary.BigEndian.PutUint16(b[32:], s.DrSLID)
		binary.BigEndian.PutUint16(b[34:], s.DrDLID)
		copy(b[128:192], s.InitialPath[:])
		copy(b[192:256], s.ReturnPath[:])
	}
	copy(b[64:128], s.Data[:])
	return nil
}

// SMPStatus returns a MAD's status with the directed-route D bit removed:
// libibmad checks only the low 15 bits of an SMP's status (docs/protocol.md).
func SMPStatus(m *MAD) Status {
	if m.IsDirectedRoute() {
		return m.Status() &^ StatusDirection
	}
	return m.Status()
}

// MarshalBinary returns the SMP as a 256-byte MAD.
func (s *SMP) MarshalBinary() ([]byte, error) {
	b := make([]byte, MADSize)
	return b, s.MarshalTo(b)
}

// UnmarshalBinary decodes a 256-byte SMP.
func (s *SMP) UnmarshalBinary(b []byte) error {
	if len(b) < MADSize {
		return errShort("SMP", MADSize, len(b))
	}
	if err := s.Header.UnmarshalBinary(b); err != nil {
		return err
	}
	if !s.MgmtClass.IsSMP() {
		return fmt.Errorf("SMP: class %s is not a subnet management class: %w", s.MgmtClass, ErrInvalid)
	}
	s.MKey = binary.BigEndian.Uint64(b[24:])
	copy(s.Data[:], b[64:128])
	if s.MgmtClass == ClassSubnDR {
		s.Direction = s.Status&StatusDirection != 0
		s.Status &^= StatusDirection
		s.HopPointer = uint8(s.ClassSpecific >> 8)
		s.HopCount = uint8(s.ClassSpecific)
		s.DrSLID = binary.BigEndian.Uint16(b[32:])
		s.DrDLID = binary.BigEndian.Uint16(b[34:])
		copy(s.InitialPath[:], b[128:192])
		copy(s.ReturnPath[:], b[192:256])
	} else {
		s.HopPointer, s.HopCount, s.Direction = 0, 0, false
		s.DrSLID, s.DrDLID = 0, 0
		s.InitialPath = [64]byte{}
		s.ReturnPath = [64]byte{}
	}
	return nil
}
