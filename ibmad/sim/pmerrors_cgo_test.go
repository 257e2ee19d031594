//go:build cgo && ibcref

package sim

// The simulated PMA's PortRcvErrorDetails, PortXmitDiscardDetails and
// PortExtendedSpeedsCounters answers (0x1F in both layouts) decoded with
// libibmad's fields, not with our codecs: ibsim lacks 0x1F, so libibmad's
// layout is the oracle for what the simulator answers.

import (
	"encoding/binary"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	c "github.com/ibtracer/ibtracer_exporter/ibmad/internal/cmadref"
)

func libibmadField(data []byte, id int, wide bool) uint64 {
	out := make([]byte, 64)
	c.Decode(data, id, out)
	if wide {
		return binary.NativeEndian.Uint64(out)
	}
	return uint64(binary.NativeEndian.Uint32(out))
}

func TestPMAErrorAnswersAgainstLibibmad(t *testing.T) {
	topo, _ := FatTree2(2, 2, 2, 1)
	f, err := New(topo, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const port = 2
	e := PortErrors{RcvErrorDetails: [6]uint64{1, 2, 3, 4, 5, 70000}, XmitDiscardDetails: [4]uint64{11, 12, 13, 14},
		FECCorrected: 123456, FECUncorrectable: 7}
	if err := f.AddPortErrors("L0", port, e); err != nil {
		t.Fatal(err)
	}
	leaf := f.Node("L0")
	ask := func(attr ibmad.AttrID) []byte {
		st, data := pmaAsk(t, f, leaf, ibmad.MethodGet, attr, port)
		if st != ibmad.StatusOK {
			t.Fatalf("%s: status %v", ibmad.AttrName(ibmad.ClassPerfMgt, attr), st)
		}
		return append([]byte(nil), data...)
	}
	check := func(what string, data []byte, id int, want uint64) {
		t.Helper()
		if got := libibmadField(data, id, false); got != want {
			t.Errorf("%s: libibmad reads %d, want %d", what, got, want)
		}
	}
	d := ask(ibmad.AttrPortRcvErrorDetails)
	check("PortRcvErrorDetails PortSelect", d, c.PC_PORT_SELECT, port)
	for i, id := range c.PC_RCV_ERR {
		check("PortRcvErrorDetails", d, id, min(e.RcvErrorDetails[i], 0xFFFF)) // saturates
	}
	d = ask(ibmad.AttrPortXmitDiscardDetails)
	check("PortXmitDiscardDetails PortSelect", d, c.PC_PORT_SELECT, port)
	for i, id := range c.PC_XMT_DISC {
		check("PortXmitDiscardDetails", d, id, e.XmitDiscardDetails[i])
	}
	d = ask(ibmad.AttrPortExtendedSpeedsCounters)
	check("PortExtendedSpeedsCounters PortSelect", d, c.PESC_FIRST, port)
	// libibmad's order: ..., ErrorDetection lanes 0-11, FECCorrectable
	// lanes 0-11 (from field 16), FECUncorrectable lanes 0-11 (from 28).
	for id := c.PESC_FIRST + 1; id < c.PESC_LAST; id++ {
		want := uint64(0)
		switch id - c.PESC_FIRST {
		case 16:
			want = e.FECCorrected
		case 28:
			want = e.FECUncorrectable
		}
		if id == c.PESC_COUNTER_SELECT {
			continue
		}
		check("PortExtendedSpeedsCounters field", d, id, want)
	}
	if err := f.SetPMAExtendedSpeeds("L0", true, false); err != nil {
		t.Fatal(err)
	}
	d = ask(ibmad.AttrPortExtendedSpeedsCounters)
	// RS-FEC: the port-wide block counters are libibmad's last three
	// fields but one.
	check("RS-FEC PortFECCorrectableBlockCtr", d, c.PESC_RSFEC_LAST-3, e.FECCorrected)
	check("RS-FEC PortFECUncorrectableBlockCtr", d, c.PESC_RSFEC_LAST-2, e.FECUncorrectable)
	var cpi ibmad.ClassPortInfo
	_ = cpi.UnmarshalBinary(ask(ibmad.AttrClassPortInfo))
	if cpi.CapabilityMask&ibmad.CPICapPMRSFEC == 0 {
		t.Errorf("RS-FEC PMA: ClassPortInfo CapabilityMask %#x lacks bit 14", cpi.CapabilityMask)
	}
}
