package ibmad_test

import (
	"context"
	"errors"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

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

// dropTransport reports one packet it dropped itself, then one receive
// error, then blocks until closed.
type dropTransport struct {
	*madtest.Transport
	n atomic.Int32
}

func (d *dropTransport) Recv(p *ibmad.Packet) error {
	switch d.n.Add(1) {
	case 1:
		return &ibmad.DropError{Reason: ibmad.DropTruncated, Err: errors.New("100 bytes")}
	case 2:
		return syscall.EIO
	}
	return d.Transport.Recv(p)
}

// TestTransportDropsAndReceiveErrors: what the transport drops is counted
// by reason; a receive error is counted and marks the device lost.
func TestTransportDropsAndReceiveErrors(t *testing.T) {
	e := ibmad.NewEngine(&dropTransport{Transport: madtest.New(nil)}, ibmad.Options{})
	defer e.Close()
	select {
	case <-e.Lost():
	case <-time.After(5 * time.Second):
		t.Fatal("a receive error did not mark the device lost")
	}
	if err := e.Err(); !errors.Is(err, ibmad.ErrDeviceLost) || !errors.Is(err, syscall.EIO) {
		t.Fatalf("Err() = %v", err)
	}
	st := e.Stats()
	if st.Drops[ibmad.DropTruncated] != 1 || st.RecvErrors != 1 || st.Received != 1 {
		t.Fatalf("drops %v, receive errors %d, received %d", st.Drops, st.RecvErrors, st.Received)
	}
	if err := e.Do(context.Background(), nodeInfoReq(1), &ibmad.Response{}); !errors.Is(err, ibmad.ErrDeviceLost) {
		t.Fatalf("a request on a lost device: %v", err)
	}
}
