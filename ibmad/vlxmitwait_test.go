package ibmad

import (
	"errors"
	"testing"
)

// TestPortVLXmitWaitCountersLayout pins the layout docs/protocol.md gives
// (libibmad's IB_PC_PORT_VL_XMIT_WAIT*_F are checked in libibmad_test.go):
// PortSelect at data byte 1, CounterSelect at 2-3, VL n at 4+2n.
func TestPortVLXmitWaitCountersLayout(t *testing.T) {
	b := make([]byte, PortVLXmitWaitCountersSize)
	b[1], b[2], b[3] = 7, 0x12, 0x34
	for vl := 0; vl < NumVLs; vl++ {
		b[4+2*vl], b[5+2*vl] = byte(vl), byte(0x80+vl)
	}
	var p PortVLXmitWaitCounters
	if err := p.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if p.PortSelect != 7 || p.CounterSelect != 0x1234 {
		t.Fatalf("PortSelect %d CounterSelect %#x", p.PortSelect, p.CounterSelect)
	}
	for vl, v := range p.PortVLXmitWait {
		if want := uint16(vl)<<8 | uint16(0x80+vl); v != want {
			t.Errorf("VL%d: %#x, want %#x", vl, v, want)
		}
	}
	out, err := p.MarshalBinary()
	if err != nil || string(out) != string(b) {
		t.Fatalf("re-encoded % x (%v), want % x", out, err, b)
	}
	if err := p.UnmarshalBinary(b[:35]); !errors.Is(err, ErrShort) {
		t.Fatalf("35 bytes: %v, want ErrShort", err)
	}
	if err := p.MarshalTo(make([]byte, 35)); !errors.Is(err, ErrShort) {
		t.Fatalf("encode into 35 bytes: %v, want ErrShort", err)
	}
	if got := AttrName(ClassPerfMgt, AttrPortVLXmitWaitCounters); got != "PortVLXmitWaitCounters" {
		t.Fatalf("AttrName: %q", got)
	}
}

func FuzzPortVLXmitWaitCounters(f *testing.F) {
	seeds(f, PortVLXmitWaitCountersSize)
	f.Fuzz(func(t *testing.T, b []byte) {
		roundTrip[PortVLXmitWaitCounters](t, b, PortVLXmitWaitCountersSize)
	})
}
