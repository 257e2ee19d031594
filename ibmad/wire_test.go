package ibmad_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// The directed-route NodeInfo Get that smpquery -D nodeinfo 0,1 sends
// (docs/protocol.md), with TID 0x1234.
func TestDRGetBytesMatchLibibmad(t *testing.T) {
	s, err := ibmad.NewDRGet(ibmad.AttrNodeInfo, 0, ibmad.DRPath{1})
	if err != nil {
		t.Fatal(err)
	}
	s.TID = 0x1234
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	want := "0181010100000001000000000000123400110000" + "00000000" + "0000000000000000" + "ffffffff"
	if got := hex.EncodeToString(b[:36]); got != want {
		t.Fatalf("header\n got %s\nwant %s", got, want)
	}
	if b[128] != 0 || b[129] != 1 {
		t.Fatalf("initial path bytes %d %d, want 0 1", b[128], b[129])
	}
	var back ibmad.SMP
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if back.HopCount != 1 || back.Direction || back.DrSLID != 0xffff || back.Path().String() != "0,1" {
		t.Fatalf("decoded %+v", back)
	}
	if _, err := ibmad.NewDRGet(ibmad.AttrNodeInfo, 0, make(ibmad.DRPath, 64)); !errors.Is(err, ibmad.ErrInvalid) {
		t.Fatalf("64-hop path: %v", err)
	}
}

// The ibping request bytes captured from infiniband-diags (docs/protocol.md, "ibping").
func TestVendorGetMatchesIbping(t *testing.T) {
	v := ibmad.NewVendorGet(ibmad.ClassOpenIBPing, ibmad.OUIOpenIB, ibmad.AttrPing, 0)
	b, _ := v.MarshalBinary()
	if got := hex.EncodeToString(b[:8]); got != "0132010100000000" {
		t.Fatalf("got %s", got)
	}
	if !bytes.Equal(b[37:40], []byte{0x00, 0x14, 0x05}) {
		t.Fatalf("OUI bytes % x", b[37:40])
	}
	v.OUI = 1 << 24
	if _, err := v.MarshalBinary(); !errors.Is(err, ibmad.ErrInvalid) {
		t.Fatalf("25-bit OUI accepted: %v", err)
	}
}

func TestSourceRouteLayout(t *testing.T) {
	sr := ibmad.SourceRoute{ActualInPort: 3, HopCount: 2, ExtVersion: 1, Flags: ibmad.SRFlagIngressKnown,
		NodeGUID: 0x0102030405060708, PortGUID: 0x1112131415161718, BaseLID: 0x2122, RecvTimeUnixNs: 0x3132333435363738,
		NodeDescription: ibmad.NewNodeDescription("leaf01")}
	sr.InPort[0], sr.InPort[1], sr.InPort[63] = 1, 7, 9
	b, err := sr.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	// Offsets from docs/protocol.md.
	for _, c := range []struct {
		off  int
		want []byte
	}{
		{0, []byte{3}}, {1, []byte{2}}, {2, []byte{1, 7}}, {65, []byte{9}}, {66, []byte{1}}, {67, []byte{1}},
		{68, []byte{1, 2, 3, 4, 5, 6, 7, 8}}, {76, []byte{0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18}},
		{84, []byte{0x21, 0x22}}, {86, []byte{0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38}}, {94, []byte("leaf01\x00")},
	} {
		if !bytes.Equal(b[c.off:c.off+len(c.want)], c.want) {
			t.Errorf("offset %d: % x, want % x", c.off, b[c.off:c.off+len(c.want)], c.want)
		}
	}
	var back ibmad.SourceRoute
	if err := back.UnmarshalBinary(b); err != nil || back != sr {
		t.Fatalf("round trip: %v %+v", err, back)
	}
	if exp, ok := back.ExpectedInPort(); !ok || exp != 7 {
		t.Fatalf("expected in-port %d %v", exp, ok)
	}
	// A seed-format (ExtVersion 0) answer: extension bytes are ignored.
	seed := append([]byte(nil), b...)
	seed[66] = 0
	if err := back.UnmarshalBinary(seed); err != nil || back.NodeGUID != 0 || back.ActualInPort != 3 || back.InPort[1] != 7 {
		t.Fatalf("seed format: %v %+v", err, back)
	}
	if err := back.UnmarshalBinary(b[:66]); err != nil {
		t.Fatalf("66 seed bytes: %v", err)
	}
	if err := back.UnmarshalBinary(b[:65]); !errors.Is(err, ibmad.ErrShort) {
		t.Fatalf("65 bytes: %v", err)
	}
	for _, hc := range []uint8{0, 65} {
		back.HopCount = hc
		if _, ok := back.ExpectedInPort(); ok || back.Validate() == nil {
			t.Errorf("hop count %d accepted", hc)
		}
	}
}

func TestStatus(t *testing.T) {
	for _, c := range []struct {
		s     ibmad.Status
		code  int
		is7   bool
		descr string
	}{
		{ibmad.StatusInvalidField, 7, true, "0x001c (invalid field)"},
		{ibmad.StatusMethodAttrUnsupp, 3, false, "0x000c (method/attribute not supported)"},
		{0x0300, 0, false, "0x0300 (class-specific 0x03)"},
		{0x0007, 1, false, "0x0007 (busy, redirect, bad version)"},
	} {
		if c.s.Code() != c.code || c.s.IsStatus7() != c.is7 || c.s.String() != c.descr {
			t.Errorf("%#04x: code %d is7 %v %q", uint16(c.s), c.s.Code(), c.s.IsStatus7(), c.s.String())
		}
	}
	if ibmad.StatusOK.Err() != nil || ibmad.StatusInvalidField.Err() == nil {
		t.Fatal("Err")
	}
}

func TestGIDAndGUIDParsing(t *testing.T) {
	g, err := ibmad.ParseGID("fe80::2:c903:a1:b2c3")
	if err != nil || g.String() != "fe80:0000:0000:0000:0002:c903:00a1:b2c3" || g.GUID() != 0x0002c90300a1b2c3 {
		t.Fatalf("%v %s", err, g)
	}
	for _, s := range []string{"0x0002c90300a1b2c3", "0002c90300a1b2c3", "0002:c903:00a1:b2c3"} {
		if v, err := ibmad.ParseGUID(s); err != nil || v != 0x0002c90300a1b2c3 {
			t.Errorf("%s: %v %s", s, err, v)
		}
	}
	for _, s := range []string{"", "xyz", "0x11112222333344445"} {
		if _, err := ibmad.ParseGUID(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
	if _, err := ibmad.ParseGID("10.0.0.1"); err == nil || !strings.Contains(err.Error(), "IPv6-style") {
		t.Errorf("IPv4 GID: %v", err)
	}
}

func TestDecodersRejectShortBuffers(t *testing.T) {
	type unm interface{ UnmarshalBinary([]byte) error }
	for name, d := range map[string]unm{"Header": &ibmad.Header{}, "SMP": &ibmad.SMP{}, "SA": &ibmad.SAMAD{},
		"Vendor": &ibmad.VendorMAD{}, "PerfMgt": &ibmad.PerfMgtMAD{}, "NodeInfo": &ibmad.NodeInfo{},
		"PortInfo": &ibmad.PortInfo{}, "SwitchInfo": &ibmad.SwitchInfo{}, "ClassPortInfo": &ibmad.ClassPortInfo{},
		"PathRecord": &ibmad.PathRecord{}, "NodeRecord": &ibmad.NodeRecord{}, "PortCounters": &ibmad.PortCounters{},
		"PortCountersExtended": &ibmad.PortCountersExtended{}, "SourceRoute": &ibmad.SourceRoute{},
		"NodeDescription": &ibmad.NodeDescription{}, "LFTBlock": &ibmad.LFTBlock{}} {
		if err := d.UnmarshalBinary(make([]byte, 10)); !errors.Is(err, ibmad.ErrShort) {
			t.Errorf("%s: 10 bytes: %v", name, err)
		}
	}
	var s ibmad.SMP
	if err := s.UnmarshalBinary(make([]byte, 256)); !errors.Is(err, ibmad.ErrInvalid) {
		t.Errorf("SMP of class 0: %v", err)
	}
	pi := ibmad.PortInfo{LMC: 8}
	if _, err := pi.MarshalBinary(); !errors.Is(err, ibmad.ErrInvalid) {
		t.Errorf("LMC 8 accepted: %v", err)
	}
}
