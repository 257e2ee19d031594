package ibmad_test

import (
	"context"
	"errors"
	"syscall"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/madtest"
)

// TestSendErrorIsDeviceFailure: a transport that cannot send (ibsim gone:
// "transport endpoint is not connected") is a device failure, never a
// timeout or a routing verdict, and is not retried.
func TestSendErrorIsDeviceFailure(t *testing.T) {
	for _, cause := range []error{syscall.ENOTCONN, syscall.EIO, errors.New("boom")} {
		tr := madtest.New(madtest.Echo)
		tr.SendErr.Store(&cause)
		e := ibmad.NewEngine(tr, ibmad.Options{})
		req := nodeInfoReq(1)
		req.Retries = 3
		err := e.Do(context.Background(), req, &ibmad.Response{})
		if !errors.Is(err, ibmad.ErrDeviceLost) || !errors.Is(err, cause) {
			t.Errorf("send error %v: Do returned %v, want an error wrapping ErrDeviceLost and the cause", cause, err)
		}
		e.Close()
	}
}
