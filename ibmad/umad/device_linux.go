package umad

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// device is an open umad character device: one MAD per read or write, and
// the agent ioctls. Tests substitute one end of a socket pair.
type device interface {
	Read(b []byte) (int, error)
	Write(b []byte) (int, error)
	Ioctl(req uintptr, arg unsafe.Pointer) error
	Close() error
}

// fileDevice is a device on a non-blocking file descriptor, read and
// written through the Go runtime's poller so that Close unblocks a reader.
type fileDevice struct {
	f *os.File
}

// openDevice opens path O_RDWR|O_NONBLOCK, as libibumad's umad_open_port
// does, and turns failures into errors that say what to do.
func openDevice(path string) (device, error) {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, openError(path, err)
	}
	return &fileDevice{f: os.NewFile(uintptr(fd), path)}, nil
}

// openError is the error of a failed open of path: what to do, with err
// wrapped. EACCES is the file's mode or owner; EPERM, where the mode
// would say EACCES, is a device cgroup: a systemd unit's DeviceAllow=,
// which systemd turns into the service's device list once, when the
// service starts (docs/packaging.md, "Boot order").
func openError(path string, err error) error {
	switch {
	case errors.Is(err, unix.EPERM):
		return fmt.Errorf("cannot open %s: operation not permitted: a device cgroup refuses it, most likely the "+
			"systemd unit's DevicePolicy=closed with a DeviceAllow= list computed when the service started (a device "+
			"path not there yet, or ib_umad not loaded yet, allows nothing): allow umad's major "+
			"(DeviceAllow=char-231 rw, as the shipped unit does) and restart the service: %w", path, err)
	case errors.Is(err, unix.EACCES):
		return fmt.Errorf("cannot open %s: permission denied; the exporter needs read-write access to "+
			"/dev/infiniband/umad*: run it as root, or give its user access: the device's group (often rdma) or a "+
			"udev rule (the packages' rule gives the ibtracer group umad*): %w", path, err)
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENODEV), errors.Is(err, unix.ENXIO):
		return fmt.Errorf("cannot open %s: the device is missing; load the ib_umad module "+
			"(modprobe ib_umad) and check the HCA driver: %w", path, err)
	}
	return fmt.Errorf("cannot open %s: %w", path, err)
}

func (d *fileDevice) Read(b []byte) (int, error)  { return d.f.Read(b) }
func (d *fileDevice) Write(b []byte) (int, error) { return d.f.Write(b) }
func (d *fileDevice) Close() error                { return d.f.Close() }

// Ioctl runs one ioctl without taking the descriptor out of non-blocking
// mode (os.File.Fd would).
func (d *fileDevice) Ioctl(req uintptr, arg unsafe.Pointer) error {
	rc, err := d.f.SyscallConn()
	if err != nil {
		return err
	}
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		_, _, errno = unix.Syscall(unix.SYS_IOCTL, fd, req, uintptr(arg))
	}); err != nil {
		return err
	}
	if errno != 0 {
		return errno
	}
	return nil
}

// maxDrained is the longest message drain reads out of the queue; a
// longer one fails the read (a reopen of the device empties the queue).
const maxDrained = 256 << 20

// drain reads a message of length bytes (header included, hs of them)
// off dev and discards it but its address and first MAD, which the
// engine fails its request with (ibmad.DropError.Packet).
func drain(dev device, devPath string, length, hs int) (*ibmad.Packet, error) {
	if length > maxDrained {
		return nil, fmt.Errorf("%s: read: a %d-byte message, too long to read out of the queue", devPath, length)
	}
	b := make([]byte, length)
	n, err := dev.Read(b)
	if err != nil {
		return nil, fmt.Errorf("%s: read: %w", devPath, err)
	}
	if n < hs+ibmad.MADSize {
		return nil, nil
	}
	var h header
	h.unmarshal(b, hs)
	p := &ibmad.Packet{Addr: h.addr}
	copy(p.MAD[:], b[hs:])
	return p, nil
}
