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
package umad
