package ibsim

// The MAD path of the transport: registration, the attached port, Send
// and Recv (conn.go holds the connection to ibsim).

import (
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/simwire"
)

// Register records which unsolicited requests to pass up. ibsim itself has
// no registration: it hands an "issm" client every request it does not
// answer itself; requests of unregistered classes are answered here as the
// kernel would (GetResp, status 0x000C).
func (t *Transport) Register(r ibmad.Registration) error {
	if !t.opts.AcceptRequests {
		return fmt.Errorf("ibsim: client at %q was connected without accepting requests; "+
			"ibsim delivers requests only to clients that connect with the issm flag", t.node)
	}
	t.regMu.Lock()
	defer t.regMu.Unlock()
	t.regs = append(t.regs, r)
	return nil
}

func (t *Transport) registered(m *ibmad.MAD) bool {
	t.regMu.Lock()
	defer t.regMu.Unlock()
	for _, r := range t.regs {
		if r.Class != m.MgmtClass() || r.Version != m.ClassVersion() {
			continue
		}
		if r.Class.IsVendorRange2() && r.OUI != m.OUI() {
			continue
		}
		for _, x := range r.Methods {
			if x == m.Method() {
				return true
			}
		}
	}
	return false
}

// Port describes the attached port; LID, SM LID and state are read from
// ibsim each time, since an SM sweep changes them. When ibsim's socket is
// gone (connection refused) or ibsim refuses the request (a restarted
// ibsim does not know this client), the error wraps ErrDeviceLost: only a
// new Dial attaches again. A slow answer (a busy ibsim) is a plain error.
func (t *Transport) Port() (ibmad.PortAttributes, error) {
	if t.closed.Load() {
		return ibmad.PortAttributes{}, ibmad.ErrClosed
	}
	req := make([]byte, simwire.CtlDataSize) // data[0] = 0: the client's own port
	reply, err := t.call(simwire.CtlGetPortInfo, req)
	if err != nil {
		if t.closed.Load() {
			return ibmad.PortAttributes{}, ibmad.ErrClosed
		}
		if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOTCONN) || errors.Is(err, syscall.ENOENT) || errors.Is(err, errCtl) {
			return ibmad.PortAttributes{}, fmt.Errorf("%w: %w", ibmad.ErrDeviceLost, err)
		}
		return ibmad.PortAttributes{}, err
	}
	var pi ibmad.PortInfo
	if err := pi.UnmarshalBinary(reply); err != nil {
		return ibmad.PortAttributes{}, err
	}
	ni := t.nodeInfo
	a := ibmad.PortAttributes{CA: "ibsim:" + t.node, PortNum: ni.LocalPortNum, NodeType: ni.NodeType,
		NodeGUID: ni.NodeGUID, PortGUID: ni.PortGUID, NodeDesc: t.nodeDesc, LID: pi.LID, LMC: pi.LMC,
		SMLID: pi.MasterSMLID, SMSL: pi.MasterSMSL, GIDPrefix: pi.GIDPrefix, State: pi.PortState,
		PhysState: pi.PortPhysState}
	if ni.NodeType == ibmad.NodeTypeSwitch {
		a.PortNum = 0
	}
	return a, nil
}

func (t *Transport) sqp(class ibmad.MgmtClass) uint32 {
	if class.IsSMP() {
		return ibmad.QP0
	}
	return ibmad.QP1
}

// Send writes one MAD to ibsim.
func (t *Transport) Send(p *ibmad.Packet) error {
	if t.closed.Load() {
		return ibmad.ErrClosed
	}
	bp := t.sendBufs.Get().(*[]byte)
	defer t.sendBufs.Put(bp)
	marshalRequest(*bp, p, t.sqp(p.MAD.MgmtClass()))
	if _, err := t.data.Write(*bp); err != nil {
		if t.closed.Load() {
			return ibmad.ErrClosed
		}
		// ECONNREFUSED/ENOENT when ibsim is gone, ENOTCONN once the
		// kernel dropped the peer: in every case the device is lost.
		return fmt.Errorf("%w: ibsim at %s: send: %w", ibmad.ErrDeviceLost, t.where(), err)
	}
	return nil
}

// recv reads one datagram into p. Its buffer comes from a pool: one per
// read would be garbage at the rate of the MADs.
func (t *Transport) recv(p *ibmad.Packet) error {
	bp, _ := t.recvBufs.Get().(*[]byte)
	if bp == nil {
		b := make([]byte, 512)
		bp = &b
	}
	defer t.recvBufs.Put(bp)
	n, err := t.data.Read(*bp)
	if err != nil {
		if t.closed.Load() {
			return ibmad.ErrClosed
		}
		return err
	}
	return unmarshalRequest((*bp)[:n], p)
}

// Recv returns the next MAD for this client. A datagram that is not a
// whole request, and a request of a class nobody registered (answered here
// with status 0x000C, as the kernel would), are reported as an
// *ibmad.DropError so that the engine counts them.
func (t *Transport) Recv(p *ibmad.Packet) error {
	for {
		if err := t.recv(p); err != nil {
			if errors.Is(err, ibmad.ErrClosed) {
				return err
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			if !isNetErr(err) {
				return &ibmad.DropError{Reason: ibmad.DropTruncated, Err: err}
			}
			return fmt.Errorf("%w: %v", ibmad.ErrDeviceLost, err)
		}
		m := &p.MAD
		meth := m.Method()
		if p.TimedOut || meth.IsResponse() || meth == ibmad.MethodTrapRepress {
			return nil
		}
		if t.nodeInfo.NodeType != ibmad.NodeTypeSwitch {
			p.InPort, p.InPortKnown = t.nodeInfo.LocalPortNum, true
		}
		if t.registered(m) {
			return nil
		}
		if meth != ibmad.MethodGet && meth != ibmad.MethodSet {
			return &ibmad.DropError{Reason: ibmad.DropNoHandler}
		}
		r := *p
		r.MAD.SetMethod(ibmad.MethodGetResp)
		r.MAD.SetStatus(ibmad.StatusMethodAttrUnsupp)
		if err := t.Send(&r); err != nil {
			return err
		}
		return &ibmad.DropError{Reason: ibmad.DropTransportAnswered}
	}
}

func isNetErr(err error) bool {
	var op *net.OpError
	return errors.As(err, &op)
}
