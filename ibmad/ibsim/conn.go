package ibsim

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/simwire"
)

// Options say which ibsim to reach and how to attach.
type Options struct {
	// SockName is the base name of ibsim's abstract sockets; default
	// $IBSIM_SOCKNAME, else "sim".
	SockName string
	// ServerName selects inet mode (UDP to this host); default
	// $IBSIM_SERVER_NAME. ServerPort defaults to $IBSIM_SERVER_PORT or 7070.
	ServerName string
	ServerPort int
	// Node is the node name (or description) to attach to; default
	// $SIM_HOST, else ibsim's default node (the first in its file).
	Node string
	// AcceptRequests connects with ibsim's "issm" flag, without which ibsim
	// delivers no unsolicited request (an agent needs it). It does not set
	// the IsSM capability bit. ibsim allows one such client per node.
	AcceptRequests bool
	// Timeout bounds every control exchange; default 2s.
	Timeout time.Duration
}

// OptionsFromEnv returns Options filled from the environment variables the
// stock tools under libumad2sim read.
func OptionsFromEnv() Options {
	o := Options{SockName: os.Getenv("IBSIM_SOCKNAME"), ServerName: os.Getenv("IBSIM_SERVER_NAME"),
		Node: os.Getenv("SIM_HOST")}
	if p, err := strconv.Atoi(os.Getenv("IBSIM_SERVER_PORT")); err == nil {
		o.ServerPort = p
	}
	return o
}

// Transport is a client connection to ibsim.
type Transport struct {
	opts     Options
	ctlMu    sync.Mutex
	ctl      net.Conn
	data     net.Conn
	clientID uint32
	node     string
	nodeInfo ibmad.NodeInfo
	nodeDesc string

	regMu sync.Mutex
	regs  []ibmad.Registration

	closed   atomic.Bool
	closeMu  sync.Once
	sendBufs sync.Pool
	recvBufs sync.Pool
}

var _ ibmad.Transport = (*Transport)(nil)

var idCounter atomic.Uint32

// Dial connects to ibsim and attaches to a node.
func Dial(o Options) (*Transport, error) {
	if o.SockName == "" {
		o.SockName = "sim"
	}
	if o.ServerPort == 0 {
		o.ServerPort = 7070
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Second
	}
	t := &Transport{opts: o}
	t.sendBufs.New = func() any { b := make([]byte, simwire.RequestSize); return &b }
	var id uint32
	var err error
	if o.ServerName == "" {
		id, err = t.openUnix()
	} else {
		id, err = t.openInet()
	}
	if err != nil {
		return nil, err
	}
	if err := t.connect(id); err != nil {
		t.closeSockets()
		return nil, err
	}
	if err := t.learnNode(); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

func (t *Transport) where() string {
	if t.opts.ServerName != "" {
		return fmt.Sprintf("udp %s:%d", t.opts.ServerName, t.opts.ServerPort)
	}
	return fmt.Sprintf("@%s:ctl (IBSIM_SOCKNAME=%s)", t.opts.SockName, t.opts.SockName)
}

func (t *Transport) noServer(err error) error {
	return fmt.Errorf("ibsim: no simulator answers at %s: %w; start one with `ibsim -s NETFILE` "+
		"and give this program the same IBSIM_SOCKNAME", t.where(), err)
}

// abstract names a socket in the abstract namespace the way ibsim does:
// its address length counts the terminating NUL, so the NUL is part of
// the name.
func abstract(format string, a ...any) string {
	return "@" + fmt.Sprintf(format, a...) + "\x00"
}

// openUnix binds our control and data sockets in the abstract namespace
// and connects the control socket to ibsim's.
func (t *Transport) openUnix() (uint32, error) {
	base := t.opts.SockName
	for try := 0; try < 64; try++ {
		id := uint32(os.Getpid())<<8 | (idCounter.Add(1) & 0xff)
		id &= 0x7fffffff
		ctl, err := net.DialUnix("unixgram",
			&net.UnixAddr{Name: abstract("%s:ctl%d", base, id), Net: "unixgram"},
			&net.UnixAddr{Name: abstract("%s:ctl", base), Net: "unixgram"})
		if err != nil {
			if errors.Is(err, syscall.EADDRINUSE) {
				continue
			}
			return 0, t.noServer(err)
		}
		data, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: abstract("%s:in%d", base, id), Net: "unixgram"})
		if err != nil {
			ctl.Close()
			if errors.Is(err, syscall.EADDRINUSE) {
				continue
			}
			return 0, fmt.Errorf("ibsim: bind data socket: %w", err)
		}
		t.ctl, t.data = ctl, data
		return id, nil
	}
	return 0, errors.New("ibsim: no free client socket name")
}

// openInet is ibsim's remote mode: UDP, with our data port as client id.
func (t *Transport) openInet() (uint32, error) {
	raddr, err := net.ResolveUDPAddr("udp", net.JoinHostPort(t.opts.ServerName, strconv.Itoa(t.opts.ServerPort)))
	if err != nil {
		return 0, fmt.Errorf("ibsim: server %q: %w", t.opts.ServerName, err)
	}
	ctl, err := net.DialUDP("udp", nil, raddr)
	if err != nil {
		return 0, t.noServer(err)
	}
	local := ctl.LocalAddr().(*net.UDPAddr)
	data, err := net.ListenUDP("udp", &net.UDPAddr{IP: local.IP})
	if err != nil {
		ctl.Close()
		return 0, fmt.Errorf("ibsim: bind data socket: %w", err)
	}
	t.ctl, t.data = ctl, data
	return uint32(data.LocalAddr().(*net.UDPAddr).Port), nil
}

func (t *Transport) closeSockets() {
	if t.ctl != nil {
		t.ctl.Close()
	}
	if t.data != nil {
		t.data.Close()
	}
}

// call does one control exchange.
func (t *Transport) call(typ uint32, data []byte) ([]byte, error) {
	t.ctlMu.Lock()
	defer t.ctlMu.Unlock()
	c := ctl{clientID: t.clientID, typ: typ, length: uint32(len(data))}
	copy(c.data[:], data)
	if err := t.ctl.SetDeadline(time.Now().Add(t.opts.Timeout)); err != nil {
		return nil, err
	}
	if _, err := t.ctl.Write(c.marshal()); err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOTCONN) || errors.Is(err, syscall.ENOENT) {
			return nil, t.noServer(err)
		}
		return nil, fmt.Errorf("ibsim: control write: %w", err)
	}
	buf := make([]byte, 512)
	n, err := t.ctl.Read(buf)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, t.noServer(fmt.Errorf("no control reply within %v", t.opts.Timeout))
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			return nil, t.noServer(err)
		}
		return nil, fmt.Errorf("ibsim: control read: %w", err)
	}
	var r ctl
	if err := r.unmarshal(buf[:n]); err != nil {
		return nil, err
	}
	if r.typ == simwire.CtlError {
		return nil, errCtl
	}
	return r.data[:], nil
}

var errCtl = errors.New("ibsim: request refused")

// connect attaches to the node and connects the data socket to the
// per-client socket ibsim assigned.
func (t *Transport) connect(id uint32) error {
	info := make([]byte, simwire.ClientInfoSize)
	le := func(off int, v uint32) {
		info[off], info[off+1], info[off+2], info[off+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
	le(0, id)
	le(4, 0) // qp
	if t.opts.AcceptRequests {
		le(8, 1)
	}
	copy(info[12:43], t.opts.Node)
	reply, err := t.call(simwire.CtlConnect, info)
	if errors.Is(err, errCtl) {
		node := t.opts.Node
		if node == "" {
			node = "(default)"
		}
		return fmt.Errorf("ibsim at %s refused to attach a client at node %q: the node is unknown, "+
			"ibsim already serves its maximum of %d clients, or (with requests accepted) another client "+
			"on that node already receives requests", t.where(), node, simwire.MaxClients)
	}
	if err != nil {
		return err
	}
	t.clientID = uint32(reply[0]) | uint32(reply[1])<<8 | uint32(reply[2])<<16 | uint32(reply[3])<<24
	name := reply[12:44]
	for i, c := range name {
		if c == 0 {
			name = name[:i]
			break
		}
	}
	t.node = string(name)
	var sa syscall.Sockaddr
	if t.opts.ServerName == "" {
		sa = &syscall.SockaddrUnix{Name: abstract("%s:out%d", t.opts.SockName, t.clientID)}
	} else {
		ip := t.ctl.RemoteAddr().(*net.UDPAddr).IP.To4()
		if ip == nil {
			return fmt.Errorf("ibsim: inet mode needs an IPv4 server address")
		}
		s4 := &syscall.SockaddrInet4{Port: t.opts.ServerPort + int(t.clientID) + 1}
		copy(s4.Addr[:], ip)
		sa = s4
	}
	sc, ok := t.data.(syscall.Conn)
	if !ok {
		return errors.New("ibsim: data socket has no file descriptor")
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return err
	}
	var cerr error
	if err := raw.Control(func(fd uintptr) { cerr = connectFD(fd, sa) }); err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("ibsim: connect data socket to client %d: %w", t.clientID, cerr)
	}
	return nil
}

// learnNode reads NodeInfo and NodeDescription of the attached node with
// directed-route SMPs to hop 0 (ibsim's control channel reports the node
// GUID where a CA's port GUID belongs).
func (t *Transport) learnNode() error {
	get := func(attr ibmad.AttrID) (*ibmad.Packet, error) {
		s, _ := ibmad.NewDRGet(attr, 0, nil)
		s.TID = uint64(attr) | 0x1b5100000000
		p := &ibmad.Packet{Addr: ibmad.DRAddress()}
		_ = s.MarshalTo(p.MAD[:])
		if err := t.Send(p); err != nil {
			return nil, err
		}
		deadline := time.Now().Add(t.opts.Timeout)
		_ = t.data.SetReadDeadline(deadline)
		defer t.data.SetReadDeadline(time.Time{})
		for {
			var r ibmad.Packet
			if err := t.recv(&r); err != nil {
				return nil, fmt.Errorf("ibsim: reading the attached node's %s: %w", ibmad.AttrName(ibmad.ClassSubnDR, attr), err)
			}
			if r.MAD.TIDLow() == p.MAD.TIDLow() && r.MAD.AttrID() == attr {
				if r.TimedOut {
					return nil, fmt.Errorf("ibsim: the attached node did not answer %s", ibmad.AttrName(ibmad.ClassSubnDR, attr))
				}
				return &r, nil
			}
		}
	}
	r, err := get(ibmad.AttrNodeInfo)
	if err != nil {
		return err
	}
	if err := t.nodeInfo.UnmarshalBinary(r.MAD.SMPData()); err != nil {
		return err
	}
	if r, err = get(ibmad.AttrNodeDescription); err != nil {
		return err
	}
	var d ibmad.NodeDescription
	_ = d.UnmarshalBinary(r.MAD.SMPData())
	t.nodeDesc = d.String()
	return nil
}

// NodeName returns the node ibsim attached this client to.
func (t *Transport) NodeName() string { return t.node }

// ClientID returns ibsim's id for this client (0..9).
func (t *Transport) ClientID() uint32 { return t.clientID }

// Close disconnects from ibsim.
func (t *Transport) Close() error {
	t.closeMu.Do(func() {
		_, _ = t.call(simwire.CtlDisconnect, nil)
		t.closed.Store(true)
		t.closeSockets()
	})
	return nil
}
