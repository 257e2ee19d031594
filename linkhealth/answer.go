package linkhealth

import (
	"errors"
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// ErrMisanswer is the error of a PMA answer for another attribute or
// another port than asked: it is never read as the asked port's
// (docs/protocol.md, "What a PMA answer must match").
var ErrMisanswer = errors.New("an answer for another attribute or port than asked is not used")

// checkAttr checks that the answer m is for the attribute asked. The
// engine matches an answer to its request by TID and class only, so the
// attribute is checked here, before the status: an error status for
// another attribute says nothing of the one asked.
func checkAttr(m *ibmad.MAD, attr ibmad.AttrID) error {
	if got := m.AttrID(); got != attr {
		return fmt.Errorf("the PMA answered %s (attribute 0x%04x): %w", ibmad.AttrName(ibmad.ClassPerfMgt, got), uint16(got), ErrMisanswer)
	}
	return nil
}

// checkPort checks that a successful answer of a port-counter attribute
// (PortCounters, PortCountersExtended, PortVLXmitWaitCounters: each has
// PortSelect at data byte 1) is for the port asked. ClassPortInfo has no
// PortSelect. A CA's answer with PortSelect 0 is its port's: a CA has no
// port 0, and a PMA that fills in the counters only (the Linux mlx5
// driver answers PerfMgt Gets itself so) leaves it 0. A switch's port 0
// is a port of its own.
func checkPort(m *ibmad.MAD, attr ibmad.AttrID, port uint8, nt ibmad.NodeType) error {
	if attr == ibmad.AttrClassPortInfo {
		return nil
	}
	if got := m.PerfMgtData()[1]; got != port && (got != 0 || nt == ibmad.NodeTypeSwitch) {
		return fmt.Errorf("the PMA answered for port %d (its PortSelect), not port %d: %w", got, port, ErrMisanswer)
	}
	return nil
}
