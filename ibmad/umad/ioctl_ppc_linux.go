//go:build linux && (ppc64 || ppc64le || mips || mipsle || mips64 || mips64le || sparc64)

package umad

// hostIOC is the _IOC encoding of arch/powerpc, arch/mips and arch/sparc.
var hostIOC = iocPowerPC
