package umad

import "testing"

// TestIoctlEncodingPerArchitecture checks the _IOC arithmetic of both
// layouts against numbers worked out by hand from the kernel headers
// (include/uapi/asm-generic/ioctl.h, arch/powerpc/include/uapi/asm/ioctl.h)
// and rdma/ib_user_mad.h. Shifts: nr 0, type 8, size 16, direction 16 +
// _IOC_SIZEBITS (30 generic, 29 powerpc). Type is IB_IOCTL_MAGIC 0x1b, so
// bits 8-15 are 0x1B00 in every number.
func TestIoctlEncodingPerArchitecture(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layout iocLayout
		want   umadIoctlNumbers
	}{
		{"asm-generic (amd64, arm64)", iocGeneric, umadIoctlNumbers{
			// _IOC_NONE 0, _IOC_WRITE 1, _IOC_READ 2, direction << 30.
			// _IOWR: (1|2)<<30 = 0xC0000000; size 28 = 0x1C << 16 = 0x001C0000; nr 1.
			registerAgent: 0xC01C1B01,
			// _IOW: 1<<30 = 0x40000000; size 4 << 16 = 0x00040000; nr 2.
			unregisterAgent: 0x40041B02,
			// _IO: 0<<30 = 0; size 0; nr 3.
			enablePKey: 0x00001B03,
			// _IOWR: 0xC0000000; size 40 = 0x28 << 16 = 0x00280000; nr 4.
			registerAgent2: 0xC0281B04,
		}},
		{"powerpc (ppc64le), mips, sparc", iocPowerPC, umadIoctlNumbers{
			// _IOC_NONE 1, _IOC_READ 2, _IOC_WRITE 4, direction << 29.
			// _IOWR: (2|4)<<29 = 6*0x20000000 = 0xC0000000; size 0x001C0000; nr 1.
			registerAgent: 0xC01C1B01,
			// _IOW: 4<<29 = 0x80000000; size 0x00040000; nr 2.
			unregisterAgent: 0x80041B02,
			// _IO: 1<<29 = 0x20000000; size 0; nr 3.
			enablePKey: 0x20001B03,
			// _IOWR: 0xC0000000; size 0x00280000; nr 4.
			registerAgent2: 0xC0281B04,
		}},
	} {
		if got := tc.layout.umadIoctls(); got != tc.want {
			t.Errorf("%s: got %#x, want %#x", tc.name, got, tc.want)
		}
	}
	// The numbers in use are the host layout's.
	h := hostIOC.umadIoctls()
	if ioctlRegisterAgent != h.registerAgent || ioctlUnregisterAgent != h.unregisterAgent ||
		ioctlEnablePKey != h.enablePKey || ioctlRegisterAgent2 != h.registerAgent2 {
		t.Errorf("package numbers %#x %#x %#x %#x, host layout %#x", ioctlRegisterAgent, ioctlUnregisterAgent,
			ioctlEnablePKey, ioctlRegisterAgent2, h)
	}
}
