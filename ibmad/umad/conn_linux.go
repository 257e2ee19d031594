package umad

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

type agentKey struct {
	class   ibmad.MgmtClass
	version uint8
	oui     ibmad.OUI
}

// Transport is an ibmad.Transport on a umad device.
type Transport struct {
	opts    Options
	ca      CA
	port    Port
	devPath string

	mu     sync.Mutex
	dev    device
	hdr    int
	agents map[agentKey]uint32 // agent used to send each class
	// unsupported holds the classes the port cannot send (no QP0), with
	// the error every send of them returns; reset on reopen.
	unsupported map[agentKey]error
	regs        []ibmad.Registration
	lost        bool
	closed      atomic.Bool
	closeCh     chan struct{}

	rbuf  []byte
	wbufs sync.Pool
	// openFn, when set, replaces opening the device file (tests).
	openFn func() (device, error)
	// maxTable is the longest message, less its header, Recv reads:
	// ibmad.DefaultMaxTableBytes, or a test's smaller bound.
	maxTable int
	// after is the wait between reopen attempts: time.After, or a
	// test's clock.
	after func(time.Duration) <-chan time.Time
	// Truncated counts multi-segment (RMPP) messages longer than one MAD;
	// their bytes after the first 256 go up in Packet.RMPPTail.
	Truncated atomic.Uint64
}

var _ ibmad.Transport = (*Transport)(nil)

// Open chooses a port through sysfs, opens its umad device and enables
// P_Key index support (the 64-byte header).
func Open(o Options) (*Transport, error) {
	if o.Sysfs == "" {
		o.Sysfs = DefaultSysfs
	}
	if o.DevDir == "" {
		o.DevDir = "/dev/infiniband"
	}
	p, err := ChoosePort(o.Sysfs, o.CA, o.Port)
	if err != nil {
		return nil, err
	}
	ca, err := ReadCA(o.Sysfs, p.CA)
	if err != nil {
		return nil, err
	}
	t := newTransport(o, ca, p)
	dev, err := t.openDev()
	if err != nil {
		return nil, err
	}
	if err := t.attach(dev); err != nil {
		dev.Close()
		return nil, err
	}
	return t, nil
}

func newTransport(o Options, ca CA, p Port) *Transport {
	if o.ReopenInterval <= 0 {
		o.ReopenInterval = time.Second
	}
	t := &Transport{opts: o, ca: ca, port: p, agents: map[agentKey]uint32{}, closeCh: make(chan struct{}),
		after: time.After, maxTable: ibmad.DefaultMaxTableBytes}
	t.wbufs.New = func() any { b := make([]byte, hdrSize+ibmad.MADSize); return &b }
	return t
}

func (t *Transport) openDev() (device, error) {
	if t.openFn != nil {
		return t.openFn()
	}
	n, err := DeviceIndex(t.opts.Sysfs, t.port.CA, t.port.Num)
	if err != nil {
		return nil, err
	}
	t.devPath = filepath.Join(t.opts.DevDir, fmt.Sprintf("umad%d", n))
	return openDevice(t.devPath)
}

// attach makes dev the transport's device: P_Key support first (it must
// precede any other use of the descriptor), then the registrations made so
// far, replayed after a reopen.
func (t *Transport) attach(dev device) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dev = dev
	t.hdr = hdrSize
	if err := dev.Ioctl(ioctlEnablePKey, nil); err != nil {
		if !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOTTY) {
			return fmt.Errorf("%s: enable P_Key index support: %w", t.devPath, err)
		}
		t.hdr = hdrSizeOld // kernel without P_Key support (docs/protocol.md)
	}
	t.agents = map[agentKey]uint32{}
	t.unsupported = map[agentKey]error{}
	for _, r := range t.regs {
		if _, err := t.registerLocked(r); err != nil {
			return err
		}
	}
	t.rbuf = make([]byte, t.hdr+ibmad.MADSize)
	t.lost = false
	return nil
}

// HeaderSize is the user MAD header in use: 64, or 56 on old kernels.
func (t *Transport) HeaderSize() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.hdr
}

// Device returns the device file in use.
func (t *Transport) Device() string { return t.devPath }

// registerLocked registers one agent with REGISTER_AGENT2, or
// REGISTER_AGENT on kernels without it, and returns its id.
func (t *Transport) registerLocked(r ibmad.Registration) (uint32, error) {
	if t.dev == nil {
		return 0, ibmad.ErrDeviceLost
	}
	mask := methodMask(r.Methods)
	rmpp := rmppFor(r.Class)
	if r.RMPP {
		rmpp = 1
	}
	oui := r.OUI
	if !r.Class.IsVendorRange2() {
		oui = 0
	}
	req2 := regReq2(qpnFor(r.Class), r.Class, r.Version, mask, oui, rmpp)
	err := t.dev.Ioctl(ioctlRegisterAgent2, unsafe.Pointer(&req2[0]))
	if err == nil {
		return uint32(req2[0]) | uint32(req2[1])<<8 | uint32(req2[2])<<16 | uint32(req2[3])<<24, nil
	}
	if errors.Is(err, unix.ENOTTY) || (errors.Is(err, unix.EINVAL) && t.hdr == hdrSizeOld) {
		req := regReq(qpnFor(r.Class), r.Class, r.Version, mask, oui, rmpp)
		if err = t.dev.Ioctl(ioctlRegisterAgent, unsafe.Pointer(&req[0])); err == nil {
			return uint32(req[0]) | uint32(req[1])<<8 | uint32(req[2])<<16 | uint32(req[3])<<24, nil
		}
	}
	what := fmt.Sprintf("class %s version %d", r.Class, r.Version)
	if oui != 0 {
		what += " OUI " + oui.String()
	}
	switch {
	case errors.Is(err, unix.EINVAL) && len(r.Methods) > 0:
		return 0, fmt.Errorf("%s: register agent for %s: %w (another process on this port, for example "+
			"ibping -S or a second exporter, may already serve these methods)", t.devPath, what, err)
	case errors.Is(err, unix.ENOMEM):
		return 0, fmt.Errorf("%s: register agent for %s: the kernel's limit of %d agents per descriptor is reached: %w",
			t.devPath, what, maxAgents, err)
	}
	return 0, fmt.Errorf("%s: register agent for %s: %w", t.devPath, what, err)
}

// Register asks the kernel for unsolicited requests of a class.
func (t *Transport) Register(r ibmad.Registration) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	id, err := t.registerLocked(r)
	if err != nil {
		return err
	}
	oui := r.OUI
	if !r.Class.IsVendorRange2() {
		oui = 0
	}
	t.regs = append(t.regs, r)
	t.agents[agentKey{r.Class, r.Version, oui}] = id
	return nil
}

// ReassemblesRMPP reports that the kernel does RMPP for the SA agent
// (registered with RMPP version 1): GetTable answers arrive reassembled
// and the kernel sends the ACKs (docs/protocol.md, "SA tables").
func (t *Transport) ReassemblesRMPP() bool { return true }

// agentFor returns the agent that sends MADs of class, registering a
// send-only one (no methods) on first use, as libibmad's clients do.
func (t *Transport) agentFor(m *ibmad.MAD) (uint32, int, error) {
	k := agentKey{m.MgmtClass(), m.ClassVersion(), 0}
	if k.class.IsVendorRange2() {
		k.oui = m.OUI()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.lost || t.dev == nil {
		return 0, 0, fmt.Errorf("%w: %s", ibmad.ErrDeviceLost, t.devPath)
	}
	if id, ok := t.agents[k]; ok {
		return id, t.hdr, nil
	}
	if err := t.unsupported[k]; err != nil {
		return 0, 0, err
	}
	id, err := t.registerLocked(ibmad.Registration{Class: k.class, Version: k.version, OUI: k.oui})
	if err != nil {
		if errors.Is(err, unix.EPROTONOSUPPORT) && qpnFor(k.class) == 0 {
			// Asked once: the port's answer does not change while open.
			err = noSMIErr(t.devPath, err)
			t.unsupported[k] = err
			return 0, 0, err
		}
		if errors.Is(err, unix.ENOMEM) {
			// The descriptor's 32 agents are taken: not for now, for good.
			return 0, 0, fmt.Errorf("%w: %w", ibmad.ErrRequestRefused, err)
		}
		return 0, 0, sendErr(t.devPath, "register a send agent", err)
	}
	t.agents[k] = id
	return id, t.hdr, nil
}

// Send writes one MAD. Requests carry the response timeout the kernel
// waits for (without one it drops the response, docs/protocol.md);
// responses carry none.
func (t *Transport) Send(p *ibmad.Packet) error {
	if t.closed.Load() {
		return ibmad.ErrClosed
	}
	id, hs, err := t.agentFor(&p.MAD)
	if err != nil {
		return err
	}
	h := header{id: id, addr: p.Addr}
	if !p.MAD.Method().IsResponse() && p.MAD.Method() != ibmad.MethodTrapRepress {
		h.timeoutMS = p.TimeoutMS
		if h.timeoutMS == 0 {
			h.timeoutMS = uint32(ibmad.DefaultTimeout / time.Millisecond)
		}
	}
	bp := t.wbufs.Get().(*[]byte)
	defer t.wbufs.Put(bp)
	b := (*bp)[:hs+ibmad.MADSize]
	h.marshal(b, hs)
	copy(b[hs:], p.MAD[:])
	t.mu.Lock()
	dev := t.dev
	t.mu.Unlock()
	if _, err := dev.Write(b); err != nil {
		if t.closed.Load() {
			return ibmad.ErrClosed
		}
		return sendErr(t.devPath, "write", err)
	}
	return nil
}

// Recv reads the next MAD or send-timeout report. A lost device (EIO)
// is reported once as ErrDeviceLost; later calls wait for the device to
// come back, reopen it and replay the registrations.
func (t *Transport) Recv(p *ibmad.Packet) error {
	for {
		if t.closed.Load() {
			return ibmad.ErrClosed
		}
		t.mu.Lock()
		dev, hs, lost := t.dev, t.hdr, t.lost
		t.mu.Unlock()
		if lost {
			if err := t.reopen(); err != nil {
				return err
			}
			continue
		}
		n, err := dev.Read(t.rbuf)
		if err != nil {
			if t.closed.Load() {
				return ibmad.ErrClosed
			}
			switch {
			case errors.Is(err, unix.ENOSPC) && len(t.rbuf) >= hs:
				// An RMPP message longer than the buffer: the kernel copied
				// the header with the full length and requeued the message
				// at the head of the queue (docs/protocol.md, "RMPP").
				var h header
				h.unmarshal(t.rbuf, hs)
				if int(h.length) <= len(t.rbuf) {
					return fmt.Errorf("%s: read: %w", t.devPath, err)
				}
				if int(h.length) <= hs+t.maxTable {
					t.rbuf = make([]byte, h.length)
					continue
				}
				// Longer than any table the engine takes: read it out of
				// the queue, or every later read fails the same way, and
				// drop it.
				head, err := drain(dev, t.devPath, int(h.length), hs)
				if err != nil {
					return err
				}
				return &ibmad.DropError{Reason: ibmad.DropTruncated, Packet: head,
					Err: fmt.Errorf("%s: a %d-byte message, over the %d bytes a table may have", t.devPath, h.length-uint32(hs), t.maxTable)}
			case errors.Is(err, unix.EIO), errors.Is(err, unix.ENODEV), errors.Is(err, os.ErrClosed):
				t.markLost()
				return fmt.Errorf("%w: %s: %v", ibmad.ErrDeviceLost, t.devPath, err)
			case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EINTR):
				continue
			}
			return fmt.Errorf("%s: read: %w", t.devPath, err)
		}
		ok := t.decode(t.rbuf[:n], hs, p)
		if len(t.rbuf) > keptReadBuffer {
			t.rbuf = make([]byte, hs+ibmad.MADSize) // a large table's buffer goes
		}
		if ok {
			return nil
		}
	}
}

// keptReadBuffer is the largest read buffer Recv keeps between reads; a
// larger message (an SA table of thousands of records) gets a buffer of
// its own size for its read.
const keptReadBuffer = 1 << 20

// decode fills p from one read; false means the read held no MAD.
func (t *Transport) decode(b []byte, hs int, p *ibmad.Packet) bool {
	if len(b) < hs+timeoutReportSize {
		return false
	}
	var h header
	h.unmarshal(b, hs)
	*p = ibmad.Packet{Addr: h.addr}
	if h.status == uint32(unix.ETIMEDOUT) && len(b) < hs+ibmad.MADSize {
		// A request that got no response: the kernel returns the user
		// header and the sent MAD's common header (docs/protocol.md).
		p.TimedOut = true
		copy(p.MAD[:], b[hs:hs+timeoutReportSize])
		return true
	}
	if len(b) < hs+ibmad.MADSize {
		return false
	}
	if len(b) > hs+ibmad.MADSize {
		// A message the kernel reassembled from RMPP segments: the rest
		// travels in RMPPTail (docs/protocol.md, "RMPP").
		t.Truncated.Add(1)
		p.Len = len(b) - hs
		p.RMPPTail = append([]byte(nil), b[hs+ibmad.MADSize:]...)
	}
	p.TimedOut = h.status == uint32(unix.ETIMEDOUT)
	copy(p.MAD[:], b[hs:hs+ibmad.MADSize])
	if t.port.Num != 0 {
		p.InPort, p.InPortKnown = t.port.Num, true
	}
	return true
}

func (t *Transport) markLost() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dev != nil {
		t.dev.Close()
	}
	t.lost = true
}

// reopen waits for the device to return.
func (t *Transport) reopen() error {
	for {
		select {
		case <-t.closeCh:
			return ibmad.ErrClosed
		case <-t.after(t.opts.ReopenInterval):
		}
		dev, err := t.openDev()
		if err != nil {
			continue
		}
		if err := t.attach(dev); err != nil {
			dev.Close()
			continue
		}
		return nil
	}
}

// Port reports the port's current sysfs attributes.
func (t *Transport) Port() (ibmad.PortAttributes, error) {
	p, err := ReadPort(t.opts.Sysfs, t.port.CA, t.port.Num)
	if err != nil {
		return ibmad.PortAttributes{}, err
	}
	guid := p.GID.GUID()
	if t.ca.NodeType == ibmad.NodeTypeSwitch || guid == 0 {
		guid = t.ca.NodeGUID
	}
	return ibmad.PortAttributes{CA: t.ca.Name, PortNum: p.Num, NodeType: t.ca.NodeType, NodeGUID: t.ca.NodeGUID,
		PortGUID: guid, NodeDesc: t.ca.NodeDesc, LID: p.LID, LMC: p.LMC, SMLID: p.SMLID, SMSL: p.SMSL,
		GIDPrefix: p.GID.Prefix(), State: p.State, PhysState: p.PhysState}, nil
}

// Close closes the device; a blocked Recv returns ErrClosed.
func (t *Transport) Close() error {
	if t.closed.Swap(true) {
		return nil
	}
	close(t.closeCh)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dev != nil && !t.lost {
		return t.dev.Close()
	}
	return nil
}
