package ibmad

import (
	"fmt"
)

// OUI is a 24-bit IEEE organizationally unique identifier.
type OUI uint32

// OUIOpenIB is the OpenIB OUI used by ibping and, by default, ibtracer.
const OUIOpenIB OUI = 0x001405

func (o OUI) String() string { return fmt.Sprintf("0x%06x", uint32(o)) }

// VendorMAD is a vendor range-2 MAD (classes 0x30-0x4F; docs/protocol.md):
// common header, RMPP header, reserved byte 36, OUI at bytes 37-39 and 216
// bytes of data from byte 40.
type VendorMAD struct {
	Header
	RMPP RMPPHeader
	OUI  OUI
	Data [VendorDataSize]byte
}

// NewVendorGet returns a vendor range-2 Get for class, attr and oui.
func NewVendorGet(class MgmtClass, oui OUI, attr AttrID, mod uint32) *VendorMAD {
	return &VendorMAD{Header: Header{BaseVersion: 1, MgmtClass: class, ClassVersion: 1,
		Method: MethodGet, AttrID: attr, AttrMod: mod}, OUI: oui}
}

// MarshalTo writes the vendor MAD into b (at least 256 bytes).
func (v *VendorMAD) MarshalTo(b []byte) error {
	if len(b) < MADSize {
		return errShort("vendor MAD", MADSize, len(b))
	}
	if v.OUI > 0xFFFFFF {
		return fmt.Errorf("vendor MAD: OUI %#x exceeds 24 bits: %w", uint32(v.OUI), ErrInvalid)
	}
	if err := v.Header.MarshalTo(b); err != nil {
		return err
	}
	v.RMPP.marshalTo(b)
	b[36] = 0
	b[37], b[38], b[39] = byte(v.OUI>>16), byte(v.OUI>>8), byte(v.OUI)
	copy(b[40:], v.Data[:])
	return nil
}

// PerfMgtMAD is a performance management MAD (class 0x04;
// docs/protocol.md): common header, 40 reserved bytes, 192 bytes of data
// from byte 64.
type PerfMgtMAD struct {
	Header
	Data [PerfMgtDataSize]byte
}

// NewPerfMgtGet returns a PerfMgt Get for attr.
func NewPerfMgtGet(attr AttrID) *PerfMgtMAD {
	return &PerfMgtMAD{Header: Header{BaseVersion: 1, MgmtClass: ClassPerfMgt, ClassVersion: 1,
		Method: MethodGet, AttrID: attr}}
}

// MarshalTo writes the PerfMgt MAD into b (at least 256 bytes).
func (p *PerfMgtMAD) MarshalTo(b []byte) error {
	if len(b) < MADSize {
		return errShort("PerfMgt MAD", MADSize, len(b))
	}
	if err := p.Header.MarshalTo(b); err != nil {
		return err
	}
	clear(b[24:64])
	copy(b[64:], p.Data[:])
	return nil
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
