package umad

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"sync"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// fakeKernel stands in for the umad character device: the transport reads
// and writes one end of a SOCK_SEQPACKET pair (one MAD per message, as the
// device does) and the test plays the kernel on the other end. Ioctls are
// emulated with the kernel's rules for agent registration.
type fakeKernel struct {
	t      *testing.T
	dev    *pairDevice
	peer   *os.File
	oldABI bool // no ENABLE_PKEY and no REGISTER_AGENT2
	mu     sync.Mutex
	agents []agentReg
	pkeyOn bool
	hdr    int
	// writeErr, if set, is what the kernel's write returns for a message
	// with this header (nil: accepted); regErr likewise for a registration.
	writeErr func(h header) error
	regErr   func(r agentReg) error
	regs     int // registration ioctls seen
}

type agentReg struct {
	class   ibmad.MgmtClass
	version uint8
	oui     ibmad.OUI
	mask    [2]uint64
	rmpp    uint8
	qpn     uint8
	viaReg2 bool
}

type pairDevice struct {
	*fileDevice
	k *fakeKernel
}

func (d *pairDevice) Ioctl(req uintptr, arg unsafe.Pointer) error { return d.k.ioctl(req, arg) }

func (d *pairDevice) Write(b []byte) (int, error) {
	d.k.mu.Lock()
	fn, hs := d.k.writeErr, d.k.hdr
	d.k.mu.Unlock()
	if fn != nil && len(b) >= hs {
		var h header
		h.unmarshal(b, hs)
		if err := fn(h); err != nil {
			return 0, err
		}
	}
	return d.fileDevice.Write(b)
}

func newFakeKernel(t *testing.T, oldABI bool) *fakeKernel {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	k := &fakeKernel{t: t, oldABI: oldABI, hdr: hdrSizeOld,
		peer: os.NewFile(uintptr(fds[1]), "kernel")}
	k.dev = &pairDevice{fileDevice: &fileDevice{f: os.NewFile(uintptr(fds[0]), "umad-fake")}, k: k}
	t.Cleanup(func() { k.peer.Close() })
	return k
}

func (k *fakeKernel) ioctl(req uintptr, arg unsafe.Pointer) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	switch req {
	case ioctlEnablePKey:
		if k.oldABI {
			return unix.EINVAL
		}
		k.pkeyOn, k.hdr = true, hdrSize
		return nil
	case ioctlRegisterAgent2:
		if k.oldABI {
			return unix.ENOTTY
		}
		b := unsafe.Slice((*byte)(arg), regReq2Size)
		ne := binary.NativeEndian
		r := agentReg{qpn: uint8(ne.Uint32(b[4:])), class: ibmad.MgmtClass(b[8]), version: b[9],
			mask: [2]uint64{ne.Uint64(b[16:]), ne.Uint64(b[24:])}, oui: ibmad.OUI(ne.Uint32(b[32:])), rmpp: b[36], viaReg2: true}
		id, err := k.register(r)
		ne.PutUint32(b[0:], id)
		return err
	case ioctlRegisterAgent:
		b := unsafe.Slice((*byte)(arg), regReqSize)
		ne := binary.NativeEndian
		r := agentReg{qpn: b[20], class: ibmad.MgmtClass(b[21]), version: b[22],
			mask: [2]uint64{ne.Uint64(b[4:]), ne.Uint64(b[12:])}, oui: ibmad.OUI(uint32(b[23])<<16 | uint32(b[24])<<8 | uint32(b[25])), rmpp: b[26]}
		id, err := k.register(r)
		ne.PutUint32(b[0:], id)
		return err
	}
	return unix.ENOTTY
}

// register applies the kernel's registration rules (docs/protocol.md, "The
// umad kernel interface").
func (k *fakeKernel) register(r agentReg) (uint32, error) {
	k.regs++
	if k.regErr != nil {
		if err := k.regErr(r); err != nil {
			return 0, err
		}
	}
	if len(k.agents) >= maxAgents {
		return 0, unix.ENOMEM
	}
	if (r.class == 0x01 || r.class == 0x81) != (r.qpn == 0) || r.version >= 8 {
		return 0, unix.EINVAL
	}
	if r.class.IsVendorRange2() && r.oui == 0 {
		return 0, unix.EINVAL
	}
	if r.rmpp != 0 && r.class != ibmad.ClassSubnAdm && !r.class.IsVendorRange2() {
		return 0, unix.EINVAL
	}
	for _, o := range k.agents {
		if o.class == r.class && o.version == r.version && o.oui == r.oui &&
			(o.mask[0]&r.mask[0] != 0 || o.mask[1]&r.mask[1] != 0) {
			return 0, unix.EINVAL // methods already claimed
		}
	}
	k.agents = append(k.agents, r)
	return uint32(len(k.agents) - 1), nil
}

// read returns the next message the transport wrote, decoded.
func (k *fakeKernel) read() (header, ibmad.MAD) {
	k.t.Helper()
	buf := make([]byte, 1024)
	_ = k.peer.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := k.peer.Read(buf)
	if err != nil {
		k.t.Fatalf("kernel read: %v", err)
	}
	if n != k.hdr+ibmad.MADSize {
		k.t.Fatalf("transport wrote %d bytes, want %d+256", n, k.hdr)
	}
	var h header
	h.unmarshal(buf, k.hdr)
	var m ibmad.MAD
	copy(m[:], buf[k.hdr:n])
	return h, m
}

// write delivers a message to the transport.
func (k *fakeKernel) write(h header, mad []byte) {
	k.t.Helper()
	b := make([]byte, k.hdr+len(mad))
	h.marshal(b, k.hdr)
	copy(b[k.hdr:], mad)
	if _, err := k.peer.Write(b); err != nil {
		k.t.Fatalf("kernel write: %v", err)
	}
}

func startTransport(t *testing.T, k *fakeKernel, port uint8) *Transport {
	t.Helper()
	tr := newTransport(Options{}, CA{Name: "fake0", NodeType: ibmad.NodeTypeCA}, Port{CA: "fake0", Num: port})
	tr.devPath = "/dev/infiniband/umad-fake"
	if err := tr.attach(k.dev); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

func TestUmadRequestResponse(t *testing.T) {
	for _, old := range []bool{false, true} {
		name := "64-byte header"
		if old {
			name = "old kernel: 56-byte header, REGISTER_AGENT"
		}
		t.Run(name, func(t *testing.T) {
			k := newFakeKernel(t, old)
			tr := startTransport(t, k, 1)
			if want := map[bool]int{false: hdrSize, true: hdrSizeOld}[old]; tr.HeaderSize() != want {
				t.Fatalf("header size %d, want %d", tr.HeaderSize(), want)
			}
			e := ibmad.NewEngine(tr, ibmad.Options{Timeout: 300 * time.Millisecond})
			defer e.Close()
			errc := make(chan error, 1)
			var resp ibmad.Response
			go func() {
				req := &ibmad.Request{Addr: ibmad.DRAddress()}
				s, _ := ibmad.NewDRGet(ibmad.AttrNodeInfo, 0, ibmad.DRPath{1})
				_ = s.MarshalTo(req.MAD[:])
				errc <- e.Do(context.Background(), req, &resp)
			}()
			h, m := k.read()
			// A send-only agent for class 0x81 on QP0 was registered on first use.
			if len(k.agents) != 1 || k.agents[0].class != ibmad.ClassSubnDR || k.agents[0].qpn != 0 ||
				k.agents[0].mask != [2]uint64{} || k.agents[0].viaReg2 == old {
				t.Fatalf("agents %+v", k.agents)
			}
			if h.id != 0 || h.timeoutMS != 300 || h.retries != 0 || h.addr.LID != 0xffff || h.addr.QPN != 0 {
				t.Fatalf("request header %+v: want agent 0, timeout 300 ms (the kernel drops responses to requests without one), lid 0xffff, qp 0", h)
			}
			// The kernel owns the upper 32 TID bits of a request; it rewrites them.
			m.SetTID(uint64(0xabcd)<<32 | uint64(m.TIDLow()))
			m.SetMethod(ibmad.MethodGetResp)
			m[4] |= 0x80
			k.write(header{id: h.id, addr: ibmad.Address{LID: 0xffff}}, m[:])
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
			if resp.MAD.TID()>>32 != 0xabcd || resp.MAD.Method() != ibmad.MethodGetResp {
				t.Fatalf("response %x", resp.MAD[:24])
			}
		})
	}
}

func TestUmadTimeoutReportAndAddress(t *testing.T) {
	k := newFakeKernel(t, false)
	tr := startTransport(t, k, 2)
	e := ibmad.NewEngine(tr, ibmad.Options{Timeout: 5 * time.Second})
	defer e.Close()
	errc := make(chan error, 1)
	var resp ibmad.Response
	go func() {
		v := ibmad.NewVendorGet(ibmad.ClassIBTracer, ibmad.OUIOpenIB, ibmad.AttrClassPortInfo, 0)
		req := &ibmad.Request{Addr: ibmad.Address{LID: 0x1234, QPN: 1, QKey: ibmad.QP1QKey, SL: 3, PKeyIndex: 2}, Retries: 1}
		_ = v.MarshalTo(req.MAD[:])
		errc <- e.Do(context.Background(), req, &resp)
	}()
	h, m := k.read()
	if h.addr.LID != 0x1234 || h.addr.QPN != 1 || h.addr.QKey != ibmad.QP1QKey || h.addr.SL != 3 || h.addr.PKeyIndex != 2 {
		t.Fatalf("address %+v", h.addr)
	}
	if a := k.agents[0]; a.class != ibmad.ClassIBTracer || a.oui != ibmad.OUIOpenIB || a.qpn != 1 {
		t.Fatalf("vendor agent %+v", a)
	}
	// The kernel gave up: it returns the header with ETIMEDOUT and the
	// request's 24-byte common header. The engine retries at once.
	start := time.Now()
	k.write(header{id: h.id, status: uint32(unix.ETIMEDOUT), addr: h.addr}, m[:timeoutReportSize])
	h2, m2 := k.read()
	if time.Since(start) > 4*time.Second || m2.TIDLow() == m.TIDLow() { // at once, not after the 5 s engine timeout
		t.Fatalf("retry after %v with TID %#x (first %#x)", time.Since(start), m2.TIDLow(), m.TIDLow())
	}
	m2.SetMethod(ibmad.MethodGetResp)
	k.write(header{id: h2.id, addr: ibmad.Address{LID: 0x1234, QPN: 1, SL: 3}}, m2[:])
	if err := <-errc; err != nil || resp.Attempts != 2 {
		t.Fatalf("%v, attempts %d", err, resp.Attempts)
	}
}

func TestUmadServesRequestsAndRespondsWithoutTimeout(t *testing.T) {
	k := newFakeKernel(t, false)
	tr := startTransport(t, k, 1)
	e := ibmad.NewEngine(tr, ibmad.Options{})
	defer e.Close()
	err := e.Handle(ibmad.ClassOpenIBPing, 1, ibmad.OUIOpenIB, []ibmad.Method{ibmad.MethodGet, ibmad.MethodSet}, false,
		func(req, resp *ibmad.Packet) bool {
			if !req.InPortKnown || req.InPort != 1 {
				t.Errorf("in-port %d known %v", req.InPort, req.InPortKnown)
			}
			resp.MAD, resp.Addr = req.MAD, req.Addr
			resp.MAD.SetMethod(ibmad.MethodGetResp)
			return true
		})
	if err != nil {
		t.Fatal(err)
	}
	if a := k.agents[0]; a.mask != [2]uint64{1<<1 | 1<<2, 0} || a.class != ibmad.ClassOpenIBPing || a.oui != ibmad.OUIOpenIB {
		t.Fatalf("registration %+v", a)
	}
	// A second registration of the same methods fails as the kernel fails
	// it, with a hint.
	err = tr.Register(ibmad.Registration{Class: ibmad.ClassOpenIBPing, Version: 1, OUI: ibmad.OUIOpenIB, Methods: []ibmad.Method{ibmad.MethodGet}})
	if err == nil || !errors.Is(err, unix.EINVAL) {
		t.Fatalf("duplicate registration: %v", err)
	}
	v := ibmad.NewVendorGet(ibmad.ClassOpenIBPing, ibmad.OUIOpenIB, ibmad.AttrPing, 0)
	v.TID = 0x77
	var m ibmad.MAD
	_ = v.MarshalTo(m[:])
	k.write(header{id: 0, addr: ibmad.Address{LID: 9, QPN: 1, SL: 0}}, m[:])
	h, r := k.read()
	if h.timeoutMS != 0 || h.addr.LID != 9 || r.Method() != ibmad.MethodGetResp || r.TID() != 0x77 {
		t.Fatalf("response header %+v method %s: a response carries no timeout", h, r.Method())
	}
}

// scriptedDevice returns canned reads, for the kernel behaviours a socket
// pair cannot produce (ENOSPC, EIO).
type scriptedDevice struct {
	mu     sync.Mutex
	reads  []func([]byte) (int, error)
	closed chan struct{}
}

func (d *scriptedDevice) Read(b []byte) (int, error) {
	d.mu.Lock()
	if len(d.reads) == 0 {
		d.mu.Unlock()
		<-d.closed
		return 0, os.ErrClosed
	}
	f := d.reads[0]
	d.reads = d.reads[1:]
	d.mu.Unlock()
	return f(b)
}
func (d *scriptedDevice) Write(b []byte) (int, error)         { return len(b), nil }
func (d *scriptedDevice) Ioctl(uintptr, unsafe.Pointer) error { return nil }
func (d *scriptedDevice) Close() error {
	select {
	case <-d.closed:
	default:
		close(d.closed)
	}
	return nil
}

// reassembled is what the kernel reads out for an SA GetTable response
// it reassembled from RMPP segments: the umad header from LID 4, then
// msgLen bytes of message.
func reassembled(msgLen int) []byte {
	full := make([]byte, hdrSize+msgLen)
	h := header{length: uint32(len(full)), addr: ibmad.Address{LID: 4}}
	h.marshal(full, hdrSize)
	full[hdrSize] = 1
	full[hdrSize+1] = byte(ibmad.ClassSubnAdm)
	full[hdrSize+3] = byte(ibmad.MethodGetTableResp)
	return full
}

// regrowing is a transport on a device that first answers a read with
// ENOSPC (full does not fit: the first 256 bytes of it) and then gives
// full to a read of len(full), as the kernel does for a reassembled RMPP
// message; seen (when not nil) is the second read's buffer length.
func regrowing(t *testing.T, full []byte, seen *int) *Transport {
	t.Helper()
	dev := &scriptedDevice{closed: make(chan struct{}), reads: []func([]byte) (int, error){
		func(b []byte) (int, error) { copy(b, full[:hdrSize+256]); return 0, unix.ENOSPC },
		func(b []byte) (int, error) {
			if seen != nil {
				*seen = len(b)
			}
			return copy(b, full), nil
		},
	}}
	tr := newTransport(Options{}, CA{Name: "fake0"}, Port{CA: "fake0", Num: 1})
	if err := tr.attach(dev); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

func TestUmadENOSPCRegrowsTheBuffer(t *testing.T) {
	full := reassembled(512) // a reassembled two-segment RMPP message
	full[hdrSize+255] = 0x5a
	var sawLen int
	tr := regrowing(t, full, &sawLen)
	var p ibmad.Packet
	if err := tr.Recv(&p); err != nil {
		t.Fatal(err)
	}
	if sawLen != len(full) || p.MAD[255] != 0x5a || p.Addr.LID != 4 || tr.Truncated.Load() != 1 {
		t.Fatalf("second read with %d bytes, MAD[255]=%#x, truncated %d", sawLen, p.MAD[255], tr.Truncated.Load())
	}
}

// readingDevice signals when a reader first enters Read: the transport
// reads a device only after attach has finished with it.
type readingDevice struct {
	device
	once    sync.Once
	reading chan struct{}
}

func newReadingDevice(d device) *readingDevice {
	return &readingDevice{device: d, reading: make(chan struct{})}
}

func (d *readingDevice) Read(b []byte) (int, error) {
	d.once.Do(func() { close(d.reading) })
	return d.device.Read(b)
}

// waitFor fails the test if ch does not close or deliver within a
// deadline generous for a loaded machine.
func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

// TestUmadDeviceLossAndReopen: EIO marks the device lost; Recv then waits
// one reopen interval per attempt (on the test's clock), retries a failed
// open, and replays the registrations on the new descriptor.
func TestUmadDeviceLossAndReopen(t *testing.T) {
	lost := &scriptedDevice{closed: make(chan struct{}), reads: []func([]byte) (int, error){
		func([]byte) (int, error) { return 0, unix.EIO },
	}}
	k := newFakeKernel(t, false)
	tr := newTransport(Options{ReopenInterval: 7 * time.Second}, CA{Name: "fake0"}, Port{CA: "fake0", Num: 1})
	waits := make(chan time.Duration)
	fire := make(chan time.Time)
	tr.after = func(d time.Duration) <-chan time.Time { waits <- d; return fire }
	opens := make(chan struct{}, 2)
	newDev := newReadingDevice(k.dev)
	tr.openFn = func() (device, error) {
		opens <- struct{}{}
		if len(opens) == 1 {
			return nil, unix.ENODEV // the first attempt: not back yet
		}
		return newDev, nil
	}
	if err := tr.attach(lost); err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if err := tr.Register(ibmad.Registration{Class: ibmad.ClassIBTracer, Version: 1, OUI: ibmad.OUIOpenIB,
		Methods: []ibmad.Method{ibmad.MethodGet}}); err != nil {
		t.Fatal(err)
	}
	k.mu.Lock()
	k.agents = nil // what the old descriptor registered
	k.pkeyOn = false
	k.mu.Unlock()
	var p ibmad.Packet
	if err := tr.Recv(&p); !errors.Is(err, ibmad.ErrDeviceLost) {
		t.Fatalf("EIO gave %v, want ErrDeviceLost", err)
	}
	if err := tr.Send(&ibmad.Packet{}); !errors.Is(err, ibmad.ErrDeviceLost) {
		t.Fatalf("send while lost: %v", err)
	}
	got := make(chan error, 1)
	go func() { got <- tr.Recv(&p) }() // waits for the device, reopens it
	for attempt := 1; attempt <= 2; attempt++ {
		if d := waitFor(t, waits, "the reopen wait"); d != 7*time.Second {
			t.Fatalf("attempt %d waited %v, want the reopen interval 7s", attempt, d)
		}
		if len(opens) != attempt-1 {
			t.Fatalf("attempt %d: %d opens before the interval passed", attempt, len(opens))
		}
		fire <- time.Now()
	}
	// The reader is on the new device: attach has finished with it.
	waitFor(t, newDev.reading, "Recv to read the reopened device")
	if len(opens) != 2 {
		t.Fatalf("%d opens, want 2 (one failed, one succeeded)", len(opens))
	}
	k.mu.Lock()
	n, pkey := len(k.agents), k.pkeyOn
	k.mu.Unlock()
	if n != 1 || !pkey {
		t.Fatalf("after reopen: %d agents (want the registration replayed), pkey %v", n, pkey)
	}
	v := ibmad.NewVendorGet(ibmad.ClassIBTracer, ibmad.OUIOpenIB, ibmad.AttrSourceRoute, 0)
	var m ibmad.MAD
	_ = v.MarshalTo(m[:])
	k.write(header{addr: ibmad.Address{LID: 3, QPN: 1}}, m[:])
	if err := waitFor(t, got, "Recv after reopen"); err != nil || p.MAD.AttrID() != ibmad.AttrSourceRoute {
		t.Fatalf("after reopen: %v", err)
	}
}

func TestUmadCloseUnblocksRecv(t *testing.T) {
	k := newFakeKernel(t, false)
	tr := startTransport(t, k, 1)
	dev := newReadingDevice(k.dev)
	tr.mu.Lock()
	tr.dev = dev
	tr.mu.Unlock()
	got := make(chan error, 1)
	go func() { var p ibmad.Packet; got <- tr.Recv(&p) }()
	waitFor(t, dev.reading, "Recv to block in Read")
	tr.Close()
	if err := waitFor(t, got, "Recv to return after Close"); !errors.Is(err, ibmad.ErrClosed) {
		t.Fatalf("got %v", err)
	}
}

func TestOpenErrorsNameTheDevice(t *testing.T) {
	dir := t.TempDir()
	_, err := Open(Options{Sysfs: fixture("dual-mlx5"), DevDir: dir})
	if err == nil || err.Error() != "cannot open "+dir+"/umad1: the device is missing; load the ib_umad module (modprobe ib_umad) and check the HCA driver: no such file or directory" {
		t.Fatalf("got %v", err)
	}
}

// TestUmadPassesTheRMPPTail: a message the kernel reassembled from RMPP
// segments reaches the engine whole: the first 256 bytes in MAD, the
// rest in RMPPTail, its length in Len (docs/protocol.md, "RMPP").
func TestUmadPassesTheRMPPTail(t *testing.T) {
	const msgLen = 256 + 2*200 - 56 // three segments, the last one padded
	full := reassembled(msgLen)
	full[hdrSize+256] = 0xa5
	full[len(full)-1] = 0x5a
	tr := regrowing(t, full, nil)
	var p ibmad.Packet
	if err := tr.Recv(&p); err != nil {
		t.Fatal(err)
	}
	if p.Len != msgLen || len(p.RMPPTail) != msgLen-256 || p.RMPPTail[0] != 0xa5 || p.RMPPTail[len(p.RMPPTail)-1] != 0x5a {
		t.Fatalf("Len %d, tail of %d bytes (want %d and %d)", p.Len, len(p.RMPPTail), msgLen, msgLen-256)
	}
}

// TestUmadENOSPCLargeTable: a reassembled SA table over 1 MiB (about
// 9,300 NodeRecords) is read whole, as any up to ibmad.DefaultMaxTableBytes
// is; the buffer goes back to its usual size afterwards.
func TestUmadENOSPCLargeTable(t *testing.T) {
	full := reassembled(2 << 20)
	full[len(full)-1] = 0x5a
	var sawLen int
	tr := regrowing(t, full, &sawLen)
	var p ibmad.Packet
	if err := tr.Recv(&p); err != nil {
		t.Fatalf("a %d-byte table: %v", len(full), err)
	}
	if sawLen != len(full) || len(p.RMPPTail) != len(full)-hdrSize-ibmad.MADSize || p.RMPPTail[len(p.RMPPTail)-1] != 0x5a {
		t.Fatalf("second read with %d bytes, tail %d bytes", sawLen, len(p.RMPPTail))
	}
	if len(tr.rbuf) > 1<<20 {
		t.Errorf("the read buffer keeps %d bytes after the table", len(tr.rbuf))
	}
}

// TestUmadENOSPCOverLimitDropped: a message longer than the transport
// takes is read out of the kernel's queue and dropped (counted), and the
// next MAD is received: the device is not taken for lost, and nothing
// waiting fails.
func TestUmadENOSPCOverLimitDropped(t *testing.T) {
	full := reassembled(ibmad.DefaultMaxTableBytes + 4096)
	next := reassembled(ibmad.MADSize)
	next[hdrSize+8+7] = 0x42 // TID
	dev := &scriptedDevice{closed: make(chan struct{}), reads: []func([]byte) (int, error){
		func(b []byte) (int, error) { copy(b, full[:hdrSize+256]); return 0, unix.ENOSPC },
		func(b []byte) (int, error) { return copy(b, full), nil },
		func(b []byte) (int, error) { return copy(b, next), nil },
	}}
	tr := newTransport(Options{}, CA{Name: "fake0"}, Port{CA: "fake0", Num: 1})
	if err := tr.attach(dev); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	var p ibmad.Packet
	err := tr.Recv(&p)
	var de *ibmad.DropError
	if !errors.As(err, &de) || de.Reason != ibmad.DropTruncated {
		t.Fatalf("a %d-byte message: %v, want a DropError (truncated)", len(full), err)
	}
	if err := tr.Recv(&p); err != nil || p.MAD.TID() != 0x42 {
		t.Fatalf("the MAD after it: %v, TID %#x", err, p.MAD.TID())
	}
}
