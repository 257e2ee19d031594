// Package umad is the Linux kernel transport of ibmad: it talks to
// /dev/infiniband/umadN directly, in pure Go through golang.org/x/sys/unix
// (no cgo, no libibumad).
//
// Open a port and run an engine on it:
//
//	tr, err := umad.Open(umad.Options{}) // the port the OFED tools would choose
//	if err != nil {
//		return err // says what to do: a missing module, a RoCE port, permissions
//	}
//	e := ibmad.NewEngine(tr, ibmad.Options{})
//	defer e.Close() // closes tr
//
// Options.CA and Options.Port choose as the OFED tools' -C and -P do;
// left empty, the first Active InfiniBand port is taken and RoCE ports
// are skipped (ChoosePort; ErrRoCEPort, ErrNoDevice). ListCAs, ReadCA and ReadPort
// read the CAs and ports from sysfs without opening anything.
//
// The transport registers the MAD agents the engine asks for with the
// kernel's ioctls, and reads and writes MADs with the 64-byte
// ib_user_mad_hdr (or the 56-byte one on kernels without P_Key support).
// A write the kernel refuses fails that request alone (an error wrapping
// ibmad.ErrRequestRefused); a device that goes away fails with
// ibmad.ErrDeviceLost, and the transport looks for it again every
// Options.ReopenInterval. Byte layouts, ioctl numbers and kernel behaviour:
// docs/protocol.md ("The umad kernel interface", "Send errors").
//
// Off Linux, Open returns an error that says umad needs Linux.
package umad
