package ibmad

import (
	"bytes"
	"encoding"
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

// Path returns the initial path as a DRPath of HopCount hops.
func (s *SMP) Path() DRPath {
	n := int(s.HopCount)
	if n > MaxDRHops {
		n = MaxDRHops
	}
	return append(DRPath(nil), s.InitialPath[1:1+n]...)
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
