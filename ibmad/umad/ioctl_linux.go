package umad

// The umad ioctl numbers, computed with the _IOC encoding of the
// architecture the program is built for (ioctl_generic_linux.go,
// ioctl_ppc_linux.go) from the definitions in rdma/ib_user_mad.h:
//
//	IB_USER_MAD_REGISTER_AGENT   _IOWR(0x1b, 1, struct ib_user_mad_reg_req)   28 bytes
//	IB_USER_MAD_UNREGISTER_AGENT _IOW(0x1b, 2, __u32)                         4 bytes
//	IB_USER_MAD_ENABLE_PKEY      _IO(0x1b, 3)
//	IB_USER_MAD_REGISTER_AGENT2  _IOWR(0x1b, 4, struct ib_user_mad_reg_req2)  40 bytes
//
// abi_cgo_test.go compares them with the C header on the build machine;
// ioctl_linux_test.go checks the powerpc encoding on any machine.
var (
	ioctlRegisterAgent   = hostIOC.umadIoctls().registerAgent
	ioctlUnregisterAgent = hostIOC.umadIoctls().unregisterAgent
	ioctlEnablePKey      = hostIOC.umadIoctls().enablePKey
	ioctlRegisterAgent2  = hostIOC.umadIoctls().registerAgent2
)

// iocLayout is how an architecture's <asm/ioctl.h> packs
// _IOC(dir, type, nr, size) into 32 bits: nr in bits 0-7, type in bits
// 8-15, size from bit 16 over sizeBits bits, and the direction above the
// size. Architectures differ in the size width and the direction values.
type iocLayout struct {
	sizeBits          uint
	none, write, read uint32
}

var (
	// iocGeneric is asm-generic/ioctl.h: x86, arm, arm64, riscv,
	// loong64, s390x.
	iocGeneric = iocLayout{sizeBits: 14, none: 0, write: 1, read: 2}
	// iocPowerPC is arch/powerpc's (and mips's, and sparc's, whose
	// _IOC_SIZEBITS is also 13): three direction bits with a non-zero
	// _IOC_NONE and write and read swapped in value.
	iocPowerPC = iocLayout{sizeBits: 13, none: 1, write: 4, read: 2}
)

func (l iocLayout) ioc(dir uint32, typ, nr uint8, size uint32) uintptr {
	return uintptr(dir<<(16+l.sizeBits) | size<<16 | uint32(typ)<<8 | uint32(nr))
}

// umadIoctlNumbers are the four umad ioctls in one layout.
type umadIoctlNumbers struct {
	registerAgent, unregisterAgent, enablePKey, registerAgent2 uintptr
}

// ibIoctlMagic is IB_IOCTL_MAGIC.
const ibIoctlMagic = 0x1b

func (l iocLayout) umadIoctls() umadIoctlNumbers {
	return umadIoctlNumbers{
		registerAgent:   l.ioc(l.read|l.write, ibIoctlMagic, 1, regReqSize),
		unregisterAgent: l.ioc(l.write, ibIoctlMagic, 2, 4),
		enablePKey:      l.ioc(l.none, ibIoctlMagic, 3, 0),
		registerAgent2:  l.ioc(l.read|l.write, ibIoctlMagic, 4, regReq2Size),
	}
}
