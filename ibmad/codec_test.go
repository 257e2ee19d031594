package ibmad

import (
	"bytes"
	"encoding"
	"encoding/binary"
	"fmt"
	"testing"
)

// wireCodec is the one marshalling convention of the package
// (docs/architecture.md): MarshalBinary and UnmarshalBinary, plus the
// allocation-free MarshalTo the engine uses.
type wireCodec interface {
	encoding.BinaryMarshaler
	encoding.BinaryUnmarshaler
	MarshalTo([]byte) error
}

// TestCodecsAreUniform: every wire type follows the convention, and a
// MarshalBinary → UnmarshalBinary → MarshalBinary round trip is stable;
// a short buffer is an error for each.
func TestCodecsAreUniform(t *testing.T) {
	for name, c := range map[string]wireCodec{
		"Header": &Header{}, "SMP": &SMP{Header: Header{MgmtClass: ClassSubnLID}},
		"SAMAD": &SAMAD{Header: Header{MgmtClass: ClassSubnAdm}}, "PerfMgtMAD": &PerfMgtMAD{Header: Header{MgmtClass: ClassPerfMgt}},
		"VendorMAD": &VendorMAD{Header: Header{MgmtClass: ClassIBTracer}},
		"NodeInfo":  &NodeInfo{}, "NodeDescription": &NodeDescription{}, "PortInfo": &PortInfo{},
		"SwitchInfo": &SwitchInfo{}, "LFTBlock": &LFTBlock{}, "ClassPortInfo": &ClassPortInfo{},
		"PathRecord": &PathRecord{}, "NodeRecord": &NodeRecord{}, "PortCounters": &PortCounters{},
		"PortCountersExtended": &PortCountersExtended{}, "SourceRoute": &SourceRoute{},
		"LFTRecord": &LFTRecord{}, "LinkRecord": &LinkRecord{}, "PortInfoRecord": &PortInfoRecord{},
		"SwitchInfoRecord": &SwitchInfoRecord{},
	} {
		b, err := c.MarshalBinary()
		if err != nil {
			t.Errorf("%s: MarshalBinary: %v", name, err)
			continue
		}
		if err := c.UnmarshalBinary(b); err != nil {
			t.Errorf("%s: UnmarshalBinary of its own %d bytes: %v", name, len(b), err)
			continue
		}
		again, _ := c.MarshalBinary()
		if !bytes.Equal(b, again) {
			t.Errorf("%s: round trip changed the bytes", name)
		}
		if err := c.MarshalTo(make([]byte, len(b)-1)); err == nil {
			t.Errorf("%s: MarshalTo into %d bytes: no error", name, len(b)-1)
		}
		short := len(b) - 1
		if name == "SourceRoute" {
			short = SourceRouteSeedSize - 1 // the seed format alone is a whole SourceRoute
		}
		if err := c.UnmarshalBinary(b[:short]); err == nil {
			t.Errorf("%s: UnmarshalBinary of %d bytes: no error", name, short)
		}
	}
}

// The codecs below complete the convention for the tests: no product
// code needs them (the engine marshals with MarshalTo and reads the
// fields it needs from the MAD), so they live here.

// MarshalBinary returns the block as 64 bytes.
func (m *MFTBlock) MarshalBinary() ([]byte, error) {
	b := make([]byte, mftBytes)
	return b, m.MarshalTo(b)
}

// MarshalBinary returns the description as 64 bytes.
func (d *NodeDescription) MarshalBinary() ([]byte, error) {
	b := make([]byte, NodeDescriptionSize)
	return b, d.MarshalTo(b)
}

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

// Path returns the initial path as a DRPath of HopCount hops.
func (s *SMP) Path() DRPath {
	n := int(s.HopCount)
	if n > MaxDRHops {
		n = MaxDRHops
	}
	return append(DRPath(nil), s.InitialPath[1:1+n]...)
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

// MarshalBinary returns the 158-byte attribute.
func (s *SourceRoute) MarshalBinary() ([]byte, error) {
	b := make([]byte, SourceRouteSize)
	return b, s.MarshalTo(b)
}

// Validate checks the tracer-set fields: HopCount must be 1..64.
func (s *SourceRoute) Validate() error {
	if s.HopCount == 0 || s.HopCount > MaxTraceHops {
		return fmt.Errorf("SourceRoute: HopCount %d outside 1..%d: %w", s.HopCount, MaxTraceHops, ErrInvalid)
	}
	return nil
}

// MarshalBinary returns the 20-byte attribute.
func (s *SwitchInfo) MarshalBinary() ([]byte, error) {
	b := make([]byte, SwitchInfoSize)
	return b, s.MarshalTo(b)
}

// MarshalBinary returns the vendor MAD as 256 bytes.
func (v *VendorMAD) MarshalBinary() ([]byte, error) {
	b := make([]byte, MADSize)
	return b, v.MarshalTo(b)
}

// UnmarshalBinary decodes a 256-byte vendor range-2 MAD.
func (v *VendorMAD) UnmarshalBinary(b []byte) error {
	if len(b) < MADSize {
		return errShort("vendor MAD", MADSize, len(b))
	}
	if err := v.Header.UnmarshalBinary(b); err != nil {
		return err
	}
	if !v.MgmtClass.IsVendorRange2() {
		return fmt.Errorf("vendor MAD: class %s is not vendor range 2: %w", v.MgmtClass, ErrInvalid)
	}
	v.RMPP.unmarshal(b)
	v.OUI = OUI(uint32(b[37])<<16 | uint32(b[38])<<8 | uint32(b[39]))
	copy(v.Data[:], b[40:])
	return nil
}

// MarshalBinary returns the PerfMgt MAD as 256 bytes.
func (p *PerfMgtMAD) MarshalBinary() ([]byte, error) {
	b := make([]byte, MADSize)
	return b, p.MarshalTo(b)
}

// UnmarshalBinary decodes a 256-byte PerfMgt MAD.
func (p *PerfMgtMAD) UnmarshalBinary(b []byte) error {
	if len(b) < MADSize {
		return errShort("PerfMgt MAD", MADSize, len(b))
	}
	if err := p.Header.UnmarshalBinary(b); err != nil {
		return err
	}
	if p.MgmtClass != ClassPerfMgt {
		return fmt.Errorf("PerfMgt MAD: class %s: %w", p.MgmtClass, ErrInvalid)
	}
	copy(p.Data[:], b[64:])
	return nil
}
