package collector

import (
	"errors"
	"os"
	"syscall"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/umad"
)

// dDeviceDown says why device_up is 0, with a bounded reason, so that a
// dashboard or an alert tells a RoCE-only node from a missing driver or a
// permission problem without reading the log.
var dDeviceDown = desc("device_down_reason", "Why no InfiniBand device is open (1 for the reason, only while device_up is 0): "+
	"roce_port (the only ports are RoCE), permission, missing (no device, driver or ib_umad), lost, error.", "reason")

// deviceDownReason sorts the error of a device that is not open.
func deviceDownReason(err error) string {
	var errno syscall.Errno
	switch {
	case err == nil:
		return "error" // not opened yet, no error known
	case errors.Is(err, umad.ErrRoCEPort):
		return "roce_port"
	case errors.Is(err, os.ErrPermission):
		return "permission"
	case errors.Is(err, ibmad.ErrDeviceLost):
		return "lost"
	case errors.Is(err, umad.ErrNoDevice), errors.Is(err, os.ErrNotExist),
		errors.As(err, &errno) && (errno == syscall.ENODEV || errno == syscall.ENXIO):
		return "missing"
	}
	return "error"
}
