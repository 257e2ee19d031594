package trace

import (
	"fmt"
	"syscall"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// TestRefusedRequestIsADeviceError: a request the local kernel refused to
// send (docs/protocol.md, "Send errors") says nothing about the fabric: it
// is a device error of this trace, never "no route" or an SA verdict.
func TestRefusedRequestIsADeviceError(t *testing.T) {
	refused := fmt.Errorf("smp NodeInfo to lid 3 qp 0: %w: %w", ibmad.ErrRequestRefused, syscall.EINVAL)
	w := &walk{}
	d := Destination{LID: 3}
	for name, e := range map[string]*Error{
		"walk":   w.smpFail(refused, "NodeInfo of hop 1"),
		"SA":     (&resolver{}).saFail(w, d, "PathRecord", refused, 0),
		"remote": remoteFail(d, "router", ibmad.GID{}, refused, 0),
	} {
		if e.Status != StatusDevice || e.Reason != ReasonDevice {
			t.Errorf("%s: status %s reason %s (%s), want %s %s", name, e.Status, e.Reason, e.Msg, StatusDevice, ReasonDevice)
		}
	}
}
