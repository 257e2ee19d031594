package simserve

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/simwire"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// tidSlots is the size of a client's table of outstanding requests' TIDs.
const tidSlots = 1024

// client is one attached client: its sim transport and its data socket.
type client struct {
	s    *Server
	id   uint32 // the server's id: the data socket is @NAME:out<id>
	pid  uint32 // the client's: its data socket is @NAME:in<pid>
	qp   uint32
	tr   *sim.Transport
	conn *net.UnixConn
	issm atomic.Bool

	// The fabric owns the upper 32 bits of a request's TID, as the kernel
	// does (docs/protocol.md); the client's are kept here, by the low 32
	// bits, and put back into the responses. libumad2sim keeps its agent
	// id there. A slot holds low<<32 | high.
	tids [tidSlots]atomic.Uint64

	stopOnce sync.Once
	dropped  atomic.Uint64 // datagrams that were not a whole request
}

func (s *Server) newClient(id, pid, qp uint32, issm bool, node *sim.Node) (*client, error) {
	tr, err := s.f.Attach(node.Name, 0)
	if err != nil {
		return nil, err
	}
	conn, err := net.DialUnix("unixgram",
		&net.UnixAddr{Name: abstractName("%s:out%d", s.opts.SockName, id), Net: "unixgram"},
		&net.UnixAddr{Name: abstractName("%s:in%d", s.opts.SockName, pid), Net: "unixgram"})
	if err != nil {
		tr.Close()
		return nil, err
	}
	cl := &client{s: s, id: id, pid: pid, qp: qp, tr: tr, conn: conn}
	cl.setISSM(issm)
	s.wg.Add(2)
	go cl.fromClient()
	go cl.toClient()
	return cl, nil
}

// setISSM sets whether the client receives the requests that reach its
// node and that the fabric does not answer itself.
func (cl *client) setISSM(on bool) {
	cl.issm.Store(on)
	cl.tr.AcceptAll(on)
}

func (cl *client) stop() {
	cl.stopOnce.Do(func() {
		cl.conn.Close()
		cl.tr.Close()
	})
}

// alive reports whether the client's data socket still exists: a
// datagram socket connects to an abstract name only while it is bound.
func (cl *client) alive() bool {
	c, err := net.DialUnix("unixgram", nil,
		&net.UnixAddr{Name: abstractName("%s:in%d", cl.s.opts.SockName, cl.pid), Net: "unixgram"})
	if err != nil {
		return !gone(err)
	}
	c.Close()
	return true
}

// gone reports whether err says the peer socket no longer exists.
func gone(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTCONN)
}

func isRequest(m *ibmad.MAD) bool {
	meth := m.Method()
	return !meth.IsResponse() && meth != ibmad.MethodTrapRepress
}

// fromClient injects the client's MADs into the fabric.
func (cl *client) fromClient() {
	defer cl.s.wg.Done()
	var buf [512]byte
	var p ibmad.Packet // Send copies it: one for the client's lifetime
	for {
		n, err := cl.conn.Read(buf[:])
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				cl.s.detach(cl, "read: "+err.Error())
			}
			return
		}
		p = ibmad.Packet{}
		r, err := parseRequest(buf[:n], &p.MAD)
		if err != nil {
			cl.dropped.Add(1)
			continue
		}
		p.Addr = ibmad.Address{LID: r.dlid, QPN: r.dqp}
		if r.dqp == ibmad.QP1 {
			p.Addr.QKey = ibmad.QP1QKey
		}
		if isRequest(&p.MAD) {
			tid := p.MAD.TID()
			cl.tids[uint32(tid)%tidSlots].Store(tid<<32 | tid>>32)
		}
		if err := cl.tr.Send(&p); err != nil {
			return // the transport is closed: the client is being detached
		}
	}
}

// toClient writes what the fabric delivers to the client's socket.
func (cl *client) toClient() {
	defer cl.s.wg.Done()
	var p ibmad.Packet
	var buf [simwire.RequestSize]byte
	for {
		if err := cl.tr.Recv(&p); err != nil {
			return
		}
		m := &p.MAD
		r := request{slid: p.Addr.LID, sqp: p.Addr.QPN, length: ibmad.MADSize}
		if p.Len > 0 && p.Len < ibmad.MADSize {
			r.length = uint64(p.Len)
		}
		if p.TimedOut {
			r.status = simwire.ETimedOut
		}
		if m.MgmtClass().IsSMP() {
			r.dqp = ibmad.QP0
		} else {
			r.dqp = ibmad.QP1
		}
		if m.MgmtClass() == ibmad.ClassSubnDR {
			r.dlid, r.slid = ibmad.PermissiveLID, ibmad.PermissiveLID
		} else {
			r.dlid = cl.tr.LID()
		}
		if !isRequest(m) {
			tid := m.TID()
			if e := cl.tids[uint32(tid)%tidSlots].Load(); uint32(e>>32) == uint32(tid) {
				m.SetTID(e<<32 | uint64(uint32(tid)))
			}
		}
		r.marshal(buf[:], m)
		if _, err := cl.conn.Write(buf[:]); err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if gone(err) {
				cl.s.detach(cl, "its socket is gone")
				return
			}
			cl.dropped.Add(1)
		}
	}
}
