package umad

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// sendErr sorts an errno of the kernel's umad write (or of the agent
// registration a first send of a class makes) into device gone, request
// refused or try again, with what the errno means for a MAD. The table,
// with where in the kernel each errno comes from, is in docs/protocol.md,
// "Send errors".
func sendErr(devPath, op string, err error) error {
	if errors.Is(err, ibmad.ErrDeviceLost) {
		return err
	}
	var errno unix.Errno
	if !errors.As(err, &errno) {
		return fmt.Errorf("%w: %s: %s: %w", ibmad.ErrRequestRefused, devPath, op, err)
	}
	// The message names the device and the operation once: the errno
	// stands for the *os.PathError that wrapped it.
	switch {
	case errno == unix.ENODEV && op == "write":
		// Not the port: rdma_create_user_ah's address resolution of one
		// RoCE destination found no network device for it (docs/protocol.md,
		// "Send errors"). A port that is gone fails a write with EIO.
		return fmt.Errorf("%w: %s: %s: the kernel found no network device for the destination's address: %w",
			ibmad.ErrRequestRefused, devPath, op, errno)
	}
	switch errno {
	case unix.EIO, unix.ENODEV, unix.ENXIO, unix.EPIPE:
		// The port was removed (the file's agents are dead) or the HCA is
		// in an internal error.
		return fmt.Errorf("%w: %s: %s: %w", ibmad.ErrDeviceLost, devPath, op, errno)
	case unix.EAGAIN, unix.EINTR, unix.ENOMEM, unix.ENOBUFS, unix.EBUSY:
		return fmt.Errorf("%w: %s: %s: %w", ibmad.ErrTryAgain, devPath, op, errno)
	}
	why := ""
	switch errno {
	case unix.EINVAL:
		why = "the kernel cannot address this request (LID routing where the port needs a GRH, an SL over 15, " +
			"a P_Key index out of range, a destination GID of another family than the source GID, or a TID still in flight)"
	case unix.ENODATA:
		why = "the source GID index is not in the port's GID table"
	case unix.ETIMEDOUT, unix.EHOSTUNREACH, unix.ENETUNREACH, unix.EADDRNOTAVAIL:
		why = "the kernel could not resolve the destination's address"
	case unix.EACCES, unix.EPERM:
		why = "the kernel's security policy refuses this P_Key or class"
	case unix.EPROTONOSUPPORT, unix.EOPNOTSUPP:
		why = "the port cannot send this class"
	}
	if why != "" {
		return fmt.Errorf("%w: %s: %s: %s: %w", ibmad.ErrRequestRefused, devPath, op, why, errno)
	}
	return fmt.Errorf("%w: %s: %s: %w", ibmad.ErrRequestRefused, devPath, op, errno)
}

// noSMIErr is the error of every SMP on a port whose kernel refused a QP0
// agent (EPROTONOSUPPORT in ib_register_mad_agent: the port has no SMI).
func noSMIErr(devPath string, err error) error {
	return fmt.Errorf("%w: %s: this port has no QP0 (no subnet management interface: a virtual function, "+
		"or a port that is not InfiniBand), so it cannot send SMPs; the tracer needs a port with QP0, the agent "+
		"and the GSI classes still work: %w", ibmad.ErrRequestRefused, devPath, err)
}
