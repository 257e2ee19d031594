package umad

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// TestUmadWriteErrnosAreSorted: every errno the kernel's write can return
// is sorted into device gone, request refused or try again
// (docs/protocol.md, "Send errors"), and a refused one says why.
func TestUmadWriteErrnosAreSorted(t *testing.T) {
	for _, tc := range []struct {
		errno unix.Errno
		want  error
		says  string
	}{
		{unix.EIO, ibmad.ErrDeviceLost, ""},
		{unix.ENODEV, ibmad.ErrRequestRefused, "network device"}, // address resolution, not the port
		{unix.EPIPE, ibmad.ErrDeviceLost, ""},
		{unix.EINVAL, ibmad.ErrRequestRefused, "cannot address"},
		{unix.ENODATA, ibmad.ErrRequestRefused, "GID index"},
		{unix.ETIMEDOUT, ibmad.ErrRequestRefused, "resolve"},
		{unix.EHOSTUNREACH, ibmad.ErrRequestRefused, "resolve"},
		{unix.EACCES, ibmad.ErrRequestRefused, "P_Key"},
		{unix.EFAULT, ibmad.ErrRequestRefused, ""},
		{unix.ENOMEM, ibmad.ErrTryAgain, ""},
		{unix.EAGAIN, ibmad.ErrTryAgain, ""},
		{unix.EINTR, ibmad.ErrTryAgain, ""},
	} {
		k := newFakeKernel(t, false)
		k.writeErr = func(header) error { return tc.errno }
		tr := startTransport(t, k, 1)
		p := &ibmad.Packet{Addr: ibmad.GSIAddress(5, 0), TimeoutMS: 100, MAD: pmaGet()}
		err := tr.Send(p)
		if !errors.Is(err, tc.want) || !errors.Is(err, tc.errno) {
			t.Errorf("%v: Send returned %v, want %v wrapping the errno", tc.errno, err, tc.want)
			continue
		}
		if tc.says != "" && !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%v: %q does not say %q", tc.errno, err, tc.says)
		}
	}
}

// TestUmadRefusedWriteThenGoodOne reproduces what the real kernel did on
// one engine: a request it refuses (EINVAL: LID routing where the port
// needs a GRH), then a good one. The first fails alone, with its address;
// the second is answered; the device is not lost.
func TestUmadRefusedWriteThenGoodOne(t *testing.T) {
	k := newFakeKernel(t, false)
	k.writeErr = func(h header) error {
		if !h.addr.GRHPresent {
			return unix.EINVAL
		}
		return nil
	}
	tr := startTransport(t, k, 1)
	e := ibmad.NewEngine(tr, ibmad.Options{Timeout: 2 * time.Second, NoRetry: true})
	defer e.Close()
	mk := func(addr ibmad.Address) *ibmad.Request { return &ibmad.Request{Addr: addr, MAD: pmaGet()} }
	err := e.Do(context.Background(), mk(ibmad.GSIAddress(3, 0)), &ibmad.Response{})
	if !errors.Is(err, ibmad.ErrRequestRefused) || errors.Is(err, ibmad.ErrDeviceLost) || !strings.Contains(err.Error(), "lid 3 qp 1") {
		t.Fatalf("the refused request: %v", err)
	}
	gid, _ := ibmad.ParseGID("fe80::2")
	good := ibmad.Address{QPN: 1, QKey: ibmad.QP1QKey, GRHPresent: true, GID: gid, HopLimit: 255}
	done := make(chan error, 1)
	go func() { done <- e.Do(context.Background(), mk(good), &ibmad.Response{}) }()
	h, m := k.read()
	m.SetMethod(ibmad.MethodGetResp)
	k.write(header{id: h.id, addr: h.addr}, m[:])
	if err := <-done; err != nil {
		t.Fatalf("the good request after a refused one: %v", err)
	}
	if e.Err() != nil {
		t.Fatalf("engine lost: %v", e.Err())
	}
}

// TestUmadNoSMIIsRefusedOnce: a port without QP0 (EPROTONOSUPPORT, a
// virtual function or a RoCE port) refuses directed-route SMPs with a
// message that says so; the registration is not tried again for every
// SMP, and the rest of the transport keeps working.
func TestUmadNoSMIIsRefusedOnce(t *testing.T) {
	k := newFakeKernel(t, false)
	k.regErr = func(r agentReg) error {
		if r.qpn == 0 {
			return unix.EPROTONOSUPPORT
		}
		return nil
	}
	tr := startTransport(t, k, 1)
	dr := &ibmad.Packet{Addr: ibmad.DRAddress(), TimeoutMS: 100}
	s, err := ibmad.NewDRGet(ibmad.AttrNodeInfo, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = s.MarshalTo(dr.MAD[:])
	for range 3 {
		err := tr.Send(dr)
		if !errors.Is(err, ibmad.ErrRequestRefused) || !errors.Is(err, unix.EPROTONOSUPPORT) || errors.Is(err, ibmad.ErrDeviceLost) ||
			!strings.Contains(err.Error(), "no QP0") {
			t.Fatalf("a DR SMP on a port without QP0: %v", err)
		}
	}
	k.mu.Lock()
	regs := k.regs
	k.mu.Unlock()
	if regs != 1 {
		t.Errorf("%d registrations tried for three SMPs, want 1", regs)
	}
	p := &ibmad.Packet{Addr: ibmad.GSIAddress(5, 0), TimeoutMS: 100, MAD: pmaGet()}
	if err := tr.Send(p); err != nil {
		t.Fatalf("a GMP on the same port: %v", err)
	}
	k.read()
}

// pmaGet is a PerfMgt ClassPortInfo Get: a GSI class, sent on QP1.
func pmaGet() ibmad.MAD {
	var m ibmad.MAD
	m.SetHeader(&ibmad.Header{BaseVersion: 1, MgmtClass: ibmad.ClassPerfMgt, ClassVersion: 1,
		Method: ibmad.MethodGet, AttrID: ibmad.AttrClassPortInfo})
	return m
}
