package ibmad_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

func TestMFTModifier(t *testing.T) {
	for _, c := range []struct {
		mlid uint16
		pos  uint8
		want uint32
	}{
		{0xC000, 0, 0},
		{0xC01F, 0, 0},
		{0xC020, 0, 1},
		{0xC001, 1, 1 << 28},
		{0xFFFE, 15, 0x1FF | 15<<28},
	} {
		got, err := ibmad.MFTModifier(c.mlid, c.pos)
		if err != nil || got != c.want {
			t.Errorf("MFTModifier(0x%04x, %d) = 0x%08x, %v; want 0x%08x", c.mlid, c.pos, got, err, c.want)
		}
	}
	for _, c := range []struct {
		mlid uint16
		pos  uint8
	}{{0xBFFF, 0}, {0xFFFF, 0}, {0xC000, 16}} {
		if _, err := ibmad.MFTModifier(c.mlid, c.pos); !errors.Is(err, ibmad.ErrInvalid) {
			t.Errorf("MFTModifier(0x%04x, %d): err %v, want ErrInvalid", c.mlid, c.pos, err)
		}
	}
}

func TestMFTBlockMask(t *testing.T) {
	wire := make([]byte, 64)
	wire[2*5], wire[2*5+1] = 0x80, 0x06 // MLID 0xC025 in block 1: ports 1, 2 and 15
	var m ibmad.MFTBlock
	if err := m.UnmarshalBinary(wire); err != nil {
		t.Fatal(err)
	}
	if got := m.Mask(0xC025); got != 0x8006 {
		t.Fatalf("Mask(0xC025) = 0x%04x, want 0x8006", got)
	}
	if got := ibmad.MFTPorts(m.Mask(0xC025), 0); !slices.Equal(got, []uint8{1, 2, 15}) {
		t.Errorf("ports at position 0 = %v", got)
	}
	if got := ibmad.MFTPorts(m.Mask(0xC025), 1); !slices.Equal(got, []uint8{17, 18, 31}) {
		t.Errorf("ports at position 1 = %v", got)
	}
	if err := m.UnmarshalBinary(wire[:63]); err == nil {
		t.Error("a 63-byte block decoded")
	}
	if ibmad.MFTPositions(36) != 3 || ibmad.MFTPositions(15) != 1 || ibmad.MFTPositions(16) != 2 {
		t.Error("MFTPositions miscounts")
	}
}
