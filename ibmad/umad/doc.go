// Package umad is the Linux kernel transport: it talks to
// /dev/infiniband/umadN directly, in pure Go through golang.org/x/sys/unix
// (no cgo, no libibumad). It discovers CAs and ports through sysfs with
// the OFED tools' port choice, registers MAD agents with the kernel's
// ioctls, and reads and writes MADs with the 64-byte ib_user_mad_hdr (or
// the 56-byte one on kernels without P_Key support). Byte layouts, ioctl
// numbers and kernel behaviour: docs/protocol.md ("The umad kernel
// interface").
//
// The transport is Linux-only (the *_linux.go files), with the ioctl
// numbers computed in the _IOC encoding of the architecture built for
// (ioctl_linux.go); elsewhere Open returns an error that says umad needs
// Linux.
//
// What each file holds:
//   - options.go: Options, what Open is given.
//   - sysfs.go: CA and Port read from sysfs (ListCAs, ReadCA, ReadPort),
//     ChoosePort (the OFED tools' choice, RoCE ports skipped: ErrRoCEPort,
//     ErrNoDevice) and DeviceIndex.
//   - conn_linux.go: Transport and Open: registering agents, Send and Recv,
//     and device loss and reopening.
//   - senderr_linux.go: the kernel's errnos of write and registration
//     sorted into device gone, request refused and try again
//     (docs/protocol.md, "Send errors").
//   - abi_linux.go: ib_user_mad_hdr (both sizes) and the agent registration
//     requests, marshalled; the QP and RMPP choice per class.
//   - device_linux.go: device, the open umad file (read, write, ioctl;
//     tests put a socket pair in its place), and openDevice, whose
//     errors say what to do.
//   - ioctl_linux.go: the _IOC encodings and the umad ioctl numbers.
//   - ioctl_generic_linux.go, ioctl_ppc_linux.go: which encoding the
//     architecture built for uses.
//   - umad_other.go: the transport off Linux, every method an error.
package umad
