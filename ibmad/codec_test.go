package ibmad

import (
	"bytes"
	"encoding"
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
