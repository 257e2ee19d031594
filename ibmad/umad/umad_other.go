//go:build !linux

package umad

import (
	"errors"
	"runtime"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// errNotLinux is what every operation returns off Linux.
var errNotLinux = errors.New("umad needs Linux (the kernel's /dev/infiniband/umad devices); on " + runtime.GOOS +
	" use --ib.transport=ibsim or --ib.transport=sim")

// Transport is the umad transport; off Linux it cannot be opened.
type Transport struct{}

var _ ibmad.Transport = (*Transport)(nil)

// Open fails: umad needs Linux.
func Open(Options) (*Transport, error) { return nil, errNotLinux }

func (*Transport) Send(*ibmad.Packet) error            { return errNotLinux }
func (*Transport) Recv(*ibmad.Packet) error            { return errNotLinux }
func (*Transport) Register(ibmad.Registration) error   { return errNotLinux }
func (*Transport) Port() (ibmad.PortAttributes, error) { return ibmad.PortAttributes{}, errNotLinux }
func (*Transport) Close() error                        { return nil }
