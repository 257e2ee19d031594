package ibmad_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/madtest"
)

// TestSendErrorIsDeviceFailure: a transport that reports its device gone
// (ibsim gone, umad EIO/ENODEV) is a device failure, never a timeout or a
// routing verdict, and is not retried.
func TestSendErrorIsDeviceFailure(t *testing.T) {
	wrapped := fmt.Errorf("%w: ibsim at x: send: %w", ibmad.ErrDeviceLost, syscall.ENOTCONN)
	for _, cause := range []error{wrapped, syscall.EIO, syscall.ENODEV} {
		tr := madtest.New(madtest.Echo)
		tr.SendErr.Store(&cause)
		e := ibmad.NewEngine(tr, ibmad.Options{})
		req := nodeInfoReq(1)
		req.Retries = 3
		err := e.Do(context.Background(), req, &ibmad.Response{})
		if !errors.Is(err, ibmad.ErrDeviceLost) || !errors.Is(err, cause) {
			t.Errorf("send error %v: Do returned %v, want an error wrapping ErrDeviceLost and the cause", cause, err)
		}
		if e.Err() == nil {
			t.Errorf("send error %v: the engine is not lost", cause)
		}
		e.Close()
	}
}

// TestRefusedRequestFailsAlone: the kernel refuses one request (EINVAL for
// an address it cannot use, ENODATA for a GID index not in the table,
// ETIMEDOUT for an address it could not resolve; docs/protocol.md, "Send
// errors"). That request fails with the reason and its address, GID
// included, and is counted; the next one on the same engine succeeds.
func TestRefusedRequestFailsAlone(t *testing.T) {
	gid, _ := ibmad.ParseGID("fe80::2:c903:a1:b2c3")
	for _, cause := range []error{syscall.EINVAL, syscall.ENODATA, syscall.ETIMEDOUT,
		fmt.Errorf("%w: /dev/infiniband/umad0: write: %w", ibmad.ErrRequestRefused, syscall.EINVAL)} {
		tr := madtest.New(madtest.Echo)
		e := ibmad.NewEngine(tr, ibmad.Options{})
		req := nodeInfoReq(0)
		req.Addr = ibmad.Address{LID: 0, QPN: 1, QKey: ibmad.QP1QKey, GRHPresent: true, GID: gid, HopLimit: 255}
		req.Retries = 3
		tr.SendErr.Store(&cause)
		err := e.Do(context.Background(), req, &ibmad.Response{})
		if err == nil || errors.Is(err, ibmad.ErrDeviceLost) || !errors.Is(err, ibmad.ErrRequestRefused) || !errors.Is(err, cause) {
			t.Errorf("send error %v: Do returned %v, want ErrRequestRefused wrapping the cause", cause, err)
		} else if !strings.Contains(err.Error(), gid.String()) {
			t.Errorf("send error %v: %q does not name the destination GID %s", cause, err, gid)
		}
		if n := tr.Sent.Load(); n != 0 {
			t.Errorf("send error %v: %d sends went through", cause, n)
		}
		tr.SendErr.Store(nil)
		var resp ibmad.Response
		if err := e.Do(context.Background(), nodeInfoReq(1), &resp); err != nil {
			t.Errorf("send error %v: the next request failed: %v", cause, err)
		}
		if err := e.Err(); err != nil {
			t.Errorf("send error %v: the engine is lost: %v", cause, err)
		}
		st := e.Stats()
		if len(st.Classes) != 1 || st.Classes[0].SendErrors != 1 {
			t.Errorf("send error %v: class stats %+v, want one send error", cause, st.Classes)
		}
		e.Close()
	}
}

// TestTryAgainSendIsRetried: a send the kernel asks to repeat (EAGAIN,
// ENOMEM, EINTR) costs an attempt, not the request.
func TestTryAgainSendIsRetried(t *testing.T) {
	tr := madtest.New(madtest.Echo)
	e := ibmad.NewEngine(tr, ibmad.Options{})
	defer e.Close()
	again := error(syscall.EAGAIN)
	tr.SendErr.Store(&again)
	req := nodeInfoReq(1)
	req.Timeout, req.Retries = 50*time.Millisecond, 3
	done := make(chan error, 1)
	go func() { done <- e.Do(context.Background(), req, &ibmad.Response{}) }()
	for len(e.Stats().Classes) == 0 || e.Stats().Classes[0].SendErrors == 0 {
		time.Sleep(time.Millisecond)
	}
	tr.SendErr.Store(nil)
	if err := <-done; err != nil {
		t.Fatalf("a send refused for now, then accepted: %v", err)
	}
	if e.Err() != nil {
		t.Fatalf("engine lost: %v", e.Err())
	}
}

// TestRefusedReplyIsDropped: the agent's reply that the kernel refuses is
// counted as dropped and leaves the engine working.
func TestRefusedReplyIsDropped(t *testing.T) {
	tr := madtest.New(nil)
	e := ibmad.NewEngine(tr, ibmad.Options{})
	defer e.Close()
	if err := e.Handle(ibmad.ClassSubnLID, 1, 0, []ibmad.Method{ibmad.MethodGet}, false,
		func(req, resp *ibmad.Packet) bool {
			*resp = *req
			resp.MAD.SetMethod(ibmad.MethodGetResp)
			return true
		}); err != nil {
		t.Fatal(err)
	}
	refused := error(syscall.EINVAL)
	tr.SendErr.Store(&refused)
	p := &ibmad.Packet{Addr: ibmad.SMPAddress(9)}
	p.MAD = nodeInfoReq(9).MAD
	tr.Inject(p)
	deadline := time.Now().Add(5 * time.Second)
	for e.Stats().Drops[ibmad.DropSendFailed] != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("drops %v", e.Stats().Drops)
		}
		time.Sleep(time.Millisecond)
	}
	if err := e.Err(); err != nil {
		t.Fatalf("a refused reply lost the engine: %v", err)
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

// blockingReplies is a transport whose writes of responses block until
// released, as the kernel's write did for about a second while it
// resolved an address on a RoCE port.
type blockingReplies struct {
	*madtest.Transport
	release chan struct{}
}

func (b *blockingReplies) Send(p *ibmad.Packet) error {
	if p.MAD.Method().IsResponse() {
		<-b.release
	}
	return b.Transport.Send(p)
}

// TestBlockingReplyDoesNotStallRequests: an agent's reply whose write
// blocks must not hold up the answers other requests wait for.
func TestBlockingReplyDoesNotStallRequests(t *testing.T) {
	tr := &blockingReplies{Transport: madtest.New(madtest.Echo), release: make(chan struct{})}
	e := ibmad.NewEngine(tr, ibmad.Options{})
	defer e.Close()
	defer close(tr.release)
	if err := e.Handle(ibmad.ClassSubnLID, 1, 0, []ibmad.Method{ibmad.MethodGet}, false,
		func(req, resp *ibmad.Packet) bool {
			*resp = *req
			resp.MAD.SetMethod(ibmad.MethodGetResp)
			return true
		}); err != nil {
		t.Fatal(err)
	}
	p := &ibmad.Packet{Addr: ibmad.SMPAddress(9)}
	p.MAD = nodeInfoReq(9).MAD
	tr.Inject(p) // its reply blocks
	time.Sleep(50 * time.Millisecond)
	req := nodeInfoReq(3)
	req.Timeout, req.NoRetry = 300*time.Millisecond, true
	if err := e.Do(context.Background(), req, &ibmad.Response{}); err != nil {
		t.Fatalf("a request while a reply's write blocks: %v", err)
	}
}

// gatedPortTransport counts Port reads. The first one signals entered and
// waits for release, so a test knows the background refresh is inside the
// transport (holding the engine's port lock) and decides when it ends.
type gatedPortTransport struct {
	*madtest.Transport
	reads   atomic.Int32
	entered chan struct{}
	release chan struct{}
}

func (g *gatedPortTransport) Port() (ibmad.PortAttributes, error) {
	if g.reads.Add(1) == 1 {
		close(g.entered)
		<-g.release
	}
	return g.Transport.Port()
}

// TestPortReadsTransportOnce: a caller of Port that finds no cached port
// while the background refresh is reading it must take the refresh's
// answer, not read the transport a second time (with a transport whose
// Port is slow or blocks, that second read held agent.New). The hook runs
// in the caller between its unlocked look at the cache and the lock, and
// lets the background read finish exactly there.
func TestPortReadsTransportOnce(t *testing.T) {
	tr := &gatedPortTransport{Transport: madtest.New(madtest.Echo), entered: make(chan struct{}), release: make(chan struct{})}
	tr.Attrs.LID = 42
	var hooked atomic.Int32
	restore := ibmad.SetBeforePortLock(func() {
		if hooked.Add(1) == 1 {
			close(tr.release)
		}
	})
	// The refresh interval is long: the engine's only background read is
	// the one at start, which the transport holds until the hook runs.
	e := ibmad.NewEngine(tr, ibmad.Options{PortRefresh: time.Hour})
	t.Cleanup(func() { e.Close(); restore() })
	<-tr.entered

	p, err := e.Port()
	if err != nil {
		t.Fatal(err)
	}
	if p.LID != 42 {
		t.Fatalf("Port LID %d, want 42", p.LID)
	}
	if hooked.Load() != 1 {
		t.Fatalf("the hook ran %d times, want 1: Port did not take the path under test", hooked.Load())
	}
	if n := tr.reads.Load(); n != 1 {
		t.Fatalf("the transport's Port was read %d times, want 1: Port read it again after the background refresh had stored it", n)
	}
}

// countingPort counts the reads of a transport's Port, whose LID the test
// changes as an SM sweep would.
type countingPort struct {
	*madtest.Transport
	reads atomic.Int32
	lid   atomic.Uint32
}

func (c *countingPort) Port() (ibmad.PortAttributes, error) {
	c.reads.Add(1)
	p := c.Attrs
	p.LID = uint16(c.lid.Load())
	return p, nil
}

// TestPortIsAtMostPortFreshOld: with the background refresh far apart (an
// idle engine wakes rarely), Port returns its copy while it is younger
// than PortFresh, and reads the transport again once it is older: a new
// LID is seen within PortFresh, not PortRefresh.
func TestPortIsAtMostPortFreshOld(t *testing.T) {
	tr := &countingPort{Transport: madtest.New(madtest.Echo)}
	tr.lid.Store(7)
	e := ibmad.NewEngine(tr, ibmad.Options{PortRefresh: time.Hour})
	t.Cleanup(func() { e.Close() })
	// The background refresh reads once at start (then hourly): let it.
	for deadline := time.Now().Add(10 * time.Second); tr.reads.Load() < 1 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if p, err := e.Port(); err != nil || p.LID != 7 {
		t.Fatalf("first: %+v %v", p, err)
	}
	reads := tr.reads.Load()
	tr.lid.Store(9)
	if p, _ := e.Port(); p.LID != 7 || tr.reads.Load() != reads {
		t.Fatalf("within PortFresh: LID %d after %d reads, want the copy (7) and no read", p.LID, tr.reads.Load()-reads)
	}
	time.Sleep(ibmad.PortFresh + 50*time.Millisecond)
	if p, _ := e.Port(); p.LID != 9 || tr.reads.Load() != reads+1 {
		t.Fatalf("after PortFresh: LID %d after %d reads, want 9 and one read", p.LID, tr.reads.Load()-reads)
	}
}
