//go:build cgo && linux && ibcref

// Cross-check of the kernel ABI against rdma/ib_user_mad.h and of the
// header bytes against libibumad (Debian linux-libc-dev, libibumad-dev),
// through the test-only cgo package internal/cumadref.

package umad

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	c "github.com/ibtracer/ibtracer_exporter/ibmad/internal/cumadref"
)

func TestABIMatchesKernelHeader(t *testing.T) {
	if c.HdrSize() != hdrSize || c.HdrOldSize() != hdrSizeOld || c.RegSize() != regReqSize || c.Reg2Size() != regReq2Size {
		t.Fatalf("sizes: hdr %d old %d reg %d reg2 %d", c.HdrSize(), c.HdrOldSize(), c.RegSize(), c.Reg2Size())
	}
	for name, pair := range map[string][2]uint64{
		"REGISTER_AGENT":   {c.IoctlRegisterAgent(), uint64(ioctlRegisterAgent)},
		"UNREGISTER_AGENT": {c.IoctlUnregisterAgent(), uint64(ioctlUnregisterAgent)},
		"ENABLE_PKEY":      {c.IoctlEnablePKey(), uint64(ioctlEnablePKey)},
		"REGISTER_AGENT2":  {c.IoctlRegisterAgent2(), uint64(ioctlRegisterAgent2)},
	} {
		if pair[0] != pair[1] {
			t.Errorf("IB_USER_MAD_%s: header %#x, ours %#x", name, pair[0], pair[1])
		}
	}
	// Offsets our marshal code writes to (abi_linux.go).
	wantHdr := []int{0, 4, 8, 12, 16, 20, 24, 28, 30, 31, 32, 33, 34, 35, 36, 52, 56}
	if got := c.HdrOffsets(); fmt.Sprint(got) != fmt.Sprint(wantHdr) {
		t.Errorf("ib_user_mad_hdr offsets %v, ours %v", got, wantHdr)
	}
	wantReg := []int{0, 4, 20, 21, 22, 23, 26}
	if got := c.RegOffsets(); fmt.Sprint(got) != fmt.Sprint(wantReg) {
		t.Errorf("ib_user_mad_reg_req offsets %v, ours %v", got, wantReg)
	}
	wantReg2 := []int{0, 4, 8, 9, 12, 16, 32, 36}
	if got := c.Reg2Offsets(); fmt.Sprint(got) != fmt.Sprint(wantReg2) {
		t.Errorf("ib_user_mad_reg_req2 offsets %v, ours %v", got, wantReg2)
	}
	// The registration encoders put each field at those offsets.
	r := regReq(1, 0x30, 1, [2]uint64{0x0102030405060708, 0x1112131415161718}, 0x001405, 1)
	if r[20] != 1 || r[21] != 0x30 || r[22] != 1 || !bytes.Equal(r[23:26], []byte{0, 0x14, 0x05}) || r[26] != 1 || r[4] != 0x08 || r[12] != 0x18 {
		t.Errorf("reg_req % x", r)
	}
	r2 := regReq2(1, 0x30, 1, [2]uint64{2, 4}, 0x001405, 0)
	if r2[4] != 1 || r2[8] != 0x30 || r2[9] != 1 || r2[16] != 2 || r2[24] != 4 || r2[32] != 0x05 || r2[33] != 0x14 {
		t.Errorf("reg_req2 % x", r2)
	}
}

// TestHeaderBytesMatchLibibumad: for random addresses, the 64-byte header
// our transport writes holds, in every address field, the bytes
// libibumad's umad_set_addr, umad_set_grh and umad_set_pkey write.
func TestHeaderBytesMatchLibibumad(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 1000; i++ {
		var a ibmad.Address
		a.LID = uint16(rng.Uint32())
		a.QPN = rng.Uint32() & 0xffffff
		a.SL = uint8(rng.IntN(16))
		a.QKey = rng.Uint32()
		a.PKeyIndex = uint16(rng.IntN(128))
		if i%2 == 1 {
			a.GRHPresent = true
			for j := range a.GID {
				a.GID[j] = byte(rng.Uint32())
			}
			a.HopLimit = uint8(rng.Uint32())
			a.TClass = uint8(rng.Uint32())
			a.FlowLabel = rng.Uint32() & 0xfffff
			// umad_set_grh never writes gid_index (libibmad's callers
			// set it themselves), so compare with 0 there.
		}
		want := c.Fill(int(a.LID), int(a.QPN), int(a.SL), int(a.QKey), a.GRHPresent, a.GID, int(a.HopLimit),
			int(a.TClass), a.FlowLabel, int(a.GIDIndex), int(a.PKeyIndex))
		got := make([]byte, hdrSize)
		h := header{addr: a}
		h.marshal(got, hdrSize)
		// umad_set_pkey writes pkey_index (a host-order __u16 at byte 56)
		// only once umad_open_port has enabled P_Key support, which needs
		// a device; without one it leaves the bytes alone. Put the index
		// where the kernel header (checked above) places it, as it would.
		binary.NativeEndian.PutUint16(want[56:], a.PKeyIndex)
		// Compare the address part (bytes 20..57); 0..19 are not set by
		// these setters.
		if !bytes.Equal(got[20:58], want[20:58]) {
			t.Fatalf("address %+v:\n ours      % x\n libibumad % x", a, got[20:58], want[20:58])
		}
		var back header
		back.unmarshal(got, hdrSize)
		if back.addr != a {
			t.Fatalf("round trip %+v -> %+v", a, back.addr)
		}
	}
}
