package simserve

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/simwire"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// Options configure a Server.
type Options struct {
	// SockName is the base name of the abstract sockets; default
	// $IBSIM_SOCKNAME, else "sim" (as ibsim and its clients choose).
	SockName string
	// DefaultNode is the node a client that names none is attached to;
	// default the fabric's first CA.
	DefaultNode string
	// Logf, when set, receives one line per client attached or detached
	// and per message refused.
	Logf func(format string, args ...any)
}

// Server serves one simulated fabric to any number of clients.
type Server struct {
	f    *sim.Fabric
	opts Options
	ctl  *net.UnixConn
	def  *sim.Node

	mu      sync.Mutex
	clients map[uint32]*client // by the id the server gave
	closed  bool
	wg      sync.WaitGroup
}

// Listen binds the control socket @SockName:ctl. Serve answers it.
func Listen(f *sim.Fabric, o Options) (*Server, error) {
	if o.SockName == "" {
		o.SockName = os.Getenv("IBSIM_SOCKNAME")
	}
	if o.SockName == "" {
		o.SockName = "sim"
	}
	s := &Server{f: f, opts: o, clients: map[uint32]*client{}}
	if o.DefaultNode != "" {
		if s.def = f.Node(o.DefaultNode); s.def == nil {
			return nil, fmt.Errorf("simserve: default node %q is not in the fabric", o.DefaultNode)
		}
	} else {
		for _, n := range f.Nodes() {
			if n.Type == ibmad.NodeTypeCA {
				s.def = n
				break
			}
		}
		if s.def == nil {
			return nil, errors.New("simserve: the fabric has no CA to be the default node")
		}
	}
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: abstractName("%s:ctl", o.SockName), Net: "unixgram"})
	if err != nil {
		return nil, fmt.Errorf("simserve: bind @%s:ctl (is another simulator using IBSIM_SOCKNAME=%s?): %w",
			o.SockName, o.SockName, err)
	}
	s.ctl = c
	return s, nil
}

// SockName returns the base name of the server's sockets.
func (s *Server) SockName() string { return s.opts.SockName }

// DefaultNode returns the node clients that name none are attached to.
func (s *Server) DefaultNode() string { return s.def.Name }

func (s *Server) logf(format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf(format, args...)
	}
}

// Serve answers control messages until Close; it returns nil then.
func (s *Server) Serve() error {
	buf := make([]byte, 512)
	for {
		n, from, err := s.ctl.ReadFromUnix(buf)
		if err != nil {
			if s.isClosed() {
				return nil
			}
			return fmt.Errorf("simserve: control socket: %w", err)
		}
		c, err := parseCtl(buf[:n])
		if err != nil {
			s.logf("simserve: %v: ignored", err)
			continue
		}
		s.handle(c)
		if from == nil {
			continue // an unbound sender cannot be answered
		}
		if err := s.answer(c, from); err != nil {
			s.logf("simserve: control reply to %q: %v", from.Name, err)
		}
	}
}

// answer sends a control reply to from. Go reports an abstract address
// up to its first NUL, but ibsim's clients bind names whose length counts
// a terminating NUL (abstractName): that name is tried first.
func (s *Server) answer(c ctlMsg, from *net.UnixAddr) error {
	if strings.HasPrefix(from.Name, "@") && !strings.HasSuffix(from.Name, "\x00") {
		withNUL := &net.UnixAddr{Name: from.Name + "\x00", Net: from.Net}
		if _, err := s.ctl.WriteToUnix(c, withNUL); err == nil || !gone(err) {
			return err
		}
	}
	_, err := s.ctl.WriteToUnix(c, from)
	return err
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Close stops serving and detaches every client.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	cls := make([]*client, 0, len(s.clients))
	for _, cl := range s.clients {
		cls = append(cls, cl)
	}
	s.clients = map[uint32]*client{}
	s.mu.Unlock()
	err := s.ctl.Close()
	for _, cl := range cls {
		cl.stop()
	}
	s.wg.Wait()
	return err
}

func (s *Server) client(id uint32) *client {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clients[id]
}

// handle answers one control message in place.
func (s *Server) handle(c ctlMsg) {
	if c.typ() == simwire.CtlConnect {
		if err := s.connect(c); err != nil {
			s.logf("simserve: connect refused: %v", err)
			c.fail()
		}
		return
	}
	cl := s.client(c.clientID())
	if cl == nil {
		if c.typ() != simwire.CtlDisconnect { // a disconnect of nobody is done already
			s.logf("simserve: control message type %d from unknown client %d refused", c.typ(), c.clientID())
			c.fail()
		}
		return
	}
	switch c.typ() {
	case simwire.CtlDisconnect:
		s.detach(cl, "disconnected")
	case simwire.CtlGetPort:
		d := c.reply() // struct sim_port: lid (u16), state (u8)
		pi, _ := cl.tr.PortInfo(0)
		le.PutUint16(d[0:], pi.LID)
		d[2] = byte(pi.PortState)
	case simwire.CtlGetVendor:
		d := c.reply() // struct sim_vendor: vendor id, part id, hw version (u32), fw version (u64 at 16)
		ni := cl.tr.NodeInfo()
		le.PutUint32(d[0:], ni.VendorID)
		le.PutUint32(d[4:], uint32(ni.DeviceID))
		le.PutUint32(d[8:], ni.Revision)
		le.PutUint64(d[16:], 1)
	case simwire.CtlGetGID:
		d := c.reply() // GID prefix and node GUID, network order
		pi, _ := cl.tr.PortInfo(0)
		ni := cl.tr.NodeInfo()
		be64(d[0:], pi.GIDPrefix)
		be64(d[8:], uint64(ni.NodeGUID))
	case simwire.CtlGetGUID:
		be64(c.reply(), uint64(cl.tr.NodeInfo().NodeGUID))
	case simwire.CtlGetNodeInfo:
		ni := cl.tr.NodeInfo()
		_ = ni.MarshalTo(c.reply())
	case simwire.CtlGetPortInfo:
		num := int(c.data()[0]) // 0 or out of range: the client's own port
		pi, ok := cl.tr.PortInfo(num)
		if !ok {
			pi, _ = cl.tr.PortInfo(int(cl.tr.PortNum()))
		}
		_ = pi.MarshalTo(c.reply())
	case simwire.CtlSetISSM:
		cl.setISSM(le.Uint32(c.data()) != 0)
	case simwire.CtlGetPKeys:
		d := c.reply() // the P_Key table, network order: the default partition only
		d[0], d[1] = 0xff, 0xff
	default:
		s.logf("simserve: control message type %d from client %d refused", c.typ(), cl.id)
		c.fail()
	}
}

func be64(b []byte, v uint64) {
	for i := 0; i < 8; i++ {
		b[i] = byte(v >> (56 - 8*i))
	}
}

// findNode resolves a CONNECT's node id as ibsim does: a node name, else
// a node description, else (empty) the default node.
func (s *Server) findNode(id string) *sim.Node {
	if id == "" {
		return s.def
	}
	if n := s.f.Node(id); n != nil {
		return n
	}
	for _, n := range s.f.Nodes() {
		if n.Desc == id {
			return n
		}
	}
	return nil
}

// connect attaches a new client and rewrites the CONNECT's client info
// into the answer: the id the client uses from now on, and the node.
func (s *Server) connect(c ctlMsg) error {
	info := c.data()
	pid, qp, issm := le.Uint32(info[0:]), le.Uint32(info[4:]), le.Uint32(info[8:]) != 0
	want := cString(info[simwire.InfoNodeOff : simwire.InfoNodeOff+simwire.InfoNodeSize])
	node := s.findNode(want)
	if node == nil {
		return fmt.Errorf("client %d names unknown node %q", pid, want)
	}
	s.reap()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("server closed")
	}
	if issm {
		for _, o := range s.clients {
			if o.issm.Load() && o.tr.Node() == node {
				return fmt.Errorf("client %d: node %q already has a client that receives requests (client %d)",
					pid, node.Name, o.id)
			}
		}
	}
	id := uint32(0)
	for s.clients[id] != nil {
		id++
	}
	cl, err := s.newClient(id, pid, qp, issm, node)
	if err != nil {
		return err
	}
	s.clients[id] = cl
	le.PutUint32(info[0:], id)
	name := info[simwire.InfoNodeOff : simwire.InfoNodeOff+simwire.InfoNodeSize]
	clear(name)
	copy(name[:simwire.InfoNodeSize-1], node.Name)
	s.logf("simserve: client %d (pid %d) attached at %q port %d%s", id, pid, node.Name, cl.tr.PortNum(),
		map[bool]string{true: ", receives requests"}[issm])
	return nil
}

// detach removes cl (if still attached) and stops it.
func (s *Server) detach(cl *client, why string) {
	s.mu.Lock()
	if s.clients[cl.id] != cl {
		s.mu.Unlock()
		return
	}
	delete(s.clients, cl.id)
	s.mu.Unlock()
	cl.stop()
	s.logf("simserve: client %d (pid %d) at %q detached: %s", cl.id, cl.pid, cl.tr.Node().Name, why)
}

// reap detaches every client whose data socket is gone: a client that
// exited without disconnecting.
func (s *Server) reap() {
	s.mu.Lock()
	cls := make([]*client, 0, len(s.clients))
	for _, cl := range s.clients {
		cls = append(cls, cl)
	}
	s.mu.Unlock()
	for _, cl := range cls {
		if !cl.alive() {
			s.detach(cl, "its socket is gone")
		}
	}
}
