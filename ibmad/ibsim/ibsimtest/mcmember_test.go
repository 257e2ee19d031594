package ibsimtest_test

import (
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
)

func TestMCMemberRecordRoundTrip(t *testing.T) {
	in := ibsimtest.MCMemberRecord{MGID: ibsimtest.MGID(7), QKey: 0x0B1B, MLID: 0xC003, TClass: 9, PKey: 0xFFFF,
		SL: 5, FlowLabel: 0xABCDE, Scope: 2, JoinState: 1}
	in.PortGID[0], in.PortGID[15] = 0xfe, 0x42
	b := make([]byte, ibsimtest.MCMemberRecordSize)
	if err := in.MarshalTo(b); err != nil {
		t.Fatal(err)
	}
	if b[36] != 0xC0 || b[37] != 0x03 || b[44] != 0x5A || b[48] != 0x21 {
		t.Fatalf("wire: MLID % x, SL/FlowLabel byte 0x%02x, scope/join 0x%02x", b[36:38], b[44], b[48])
	}
	var out ibsimtest.MCMemberRecord
	if err := out.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if out != in {
		t.Errorf("round trip: got %+v, want %+v", out, in)
	}
}
