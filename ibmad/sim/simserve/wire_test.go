package simserve

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// rawClient speaks the protocol with bytes laid out by hand from ibsim's
// struct definitions (docs/protocol.md), not with the package's codec.
type rawClient struct {
	t         *testing.T
	ctl, data *net.UnixConn
	pid, id   uint32
}

func rawDial(t *testing.T, sock string, pid uint32, node string, issm bool) *rawClient {
	t.Helper()
	name := func(f string, a ...any) *net.UnixAddr {
		return &net.UnixAddr{Name: "@" + fmt.Sprintf(f, a...) + "\x00", Net: "unixgram"}
	}
	ctl, err := net.DialUnix("unixgram", name("%s:ctl%d", sock, pid), name("%s:ctl", sock))
	if err != nil {
		t.Fatal(err)
	}
	data, err := net.ListenUnixgram("unixgram", name("%s:in%d", sock, pid))
	if err != nil {
		t.Fatal(err)
	}
	c := &rawClient{t: t, ctl: ctl, data: data, pid: pid}
	t.Cleanup(func() { ctl.Close(); data.Close() })
	info := make([]byte, 44)
	binary.LittleEndian.PutUint32(info[0:], pid)
	if issm {
		binary.LittleEndian.PutUint32(info[8:], 1)
	}
	copy(info[12:], node)
	r := c.call(1, info) // SIM_CTL_CONNECT
	c.id = binary.LittleEndian.Uint32(r[0:])
	if got := cString(r[12:44]); got != node && node != "" {
		t.Fatalf("attached at %q, asked for %q", got, node)
	}
	// Connect the data socket to @sock:out<id>.
	raw, _ := data.SyscallConn()
	var cerr error
	_ = raw.Control(func(fd uintptr) {
		cerr = connectAbstract(fd, fmt.Sprintf("%s:out%d", sock, c.id))
	})
	if cerr != nil {
		t.Fatal(cerr)
	}
	return c
}

func (c *rawClient) call(typ uint32, data []byte) []byte {
	c.t.Helper()
	b := make([]byte, 80)
	binary.LittleEndian.PutUint32(b[0:], 0xdeadbeef)
	binary.LittleEndian.PutUint32(b[4:], c.id)
	binary.LittleEndian.PutUint32(b[8:], typ)
	binary.LittleEndian.PutUint32(b[12:], uint32(len(data)))
	copy(b[16:], data)
	if _, err := c.ctl.Write(b); err != nil {
		c.t.Fatal(err)
	}
	_ = c.ctl.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := c.ctl.Read(b)
	if err != nil || n != 80 {
		c.t.Fatalf("control reply: %d bytes, %v", n, err)
	}
	if binary.LittleEndian.Uint32(b[8:]) == 0 {
		c.t.Fatalf("control message type %d refused", typ)
	}
	return b[16:]
}

// TestWireNodeInfoAndTID: a directed-route NodeInfo sent with a TID whose
// upper 32 bits the client chose comes back with exactly that TID (the
// fabric owns those bits; libumad2sim keeps its agent id there), from the
// permissive LID on QP0, length 256; the control channel reports the same
// port LID and node GUID the fabric has.
func TestWireNodeInfoAndTID(t *testing.T) {
	topo, err := sim.FatTree2(2, 1, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	f, err := sim.New(topo, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sock := fmt.Sprintf("simservewire%d", os.Getpid())
	s, err := Listen(f, Options{SockName: sock, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Close() })
	c := rawDial(t, sock, 4242, "", false)
	want := s.def
	lid, _ := f.LIDOf(want.Name, 0)

	port := c.call(3, nil) // SIM_CTL_GET_PORT: struct sim_port {u16 lid; u8 state}
	if got := binary.LittleEndian.Uint16(port[0:]); got != lid || port[2] != byte(ibmad.PortStateActive) {
		t.Errorf("GET_PORT: lid %d state %d, want %d and Active", got, port[2], lid)
	}
	ni := c.call(7, nil) // SIM_CTL_GET_NODEINFO: NodeInfo as on the wire
	if g := binary.BigEndian.Uint64(ni[12:]); g != uint64(want.GUID) || ni[2] != byte(want.Type) {
		t.Errorf("GET_NODEINFO: GUID %#x type %d, want %#x %d", g, ni[2], uint64(want.GUID), want.Type)
	}

	req := make([]byte, 288)
	binary.BigEndian.PutUint16(req[0:], 0xffff) // dlid
	binary.BigEndian.PutUint16(req[4:], 0xffff) // slid
	binary.BigEndian.PutUint64(req[24:], 256)   // length
	m := req[32:]
	m[0], m[1], m[2], m[3] = 1, 0x81, 1, 1 // base version, DR SMP class, class version, Get
	const tid = 0xab12cd3400000042
	binary.BigEndian.PutUint64(m[8:], tid)
	binary.BigEndian.PutUint16(m[16:], 0x0011) // NodeInfo
	binary.BigEndian.PutUint16(m[32:], 0xffff) // DrSLID
	binary.BigEndian.PutUint16(m[34:], 0xffff) // DrDLID
	if _, err := c.data.Write(req); err != nil {
		t.Fatal(err)
	}
	_ = c.data.SetReadDeadline(time.Now().Add(10 * time.Second))
	b := make([]byte, 512)
	n, err := c.data.Read(b)
	if err != nil || n != 288 {
		t.Fatalf("response: %d bytes, %v", n, err)
	}
	r := b[32:]
	if got := binary.BigEndian.Uint64(r[8:]); got != tid {
		t.Errorf("response TID %#x, sent %#x", got, uint64(tid))
	}
	if r[3] != 0x81 || binary.BigEndian.Uint16(r[4:])&0x7fff != 0 {
		t.Errorf("response method %#x status %#x, want GetResp, 0", r[3], binary.BigEndian.Uint16(r[4:]))
	}
	if g := binary.BigEndian.Uint64(r[64+12:]); g != uint64(want.GUID) {
		t.Errorf("NodeInfo GUID %#x, want %#x", g, uint64(want.GUID))
	}
	if slid, sqp, st, l := binary.BigEndian.Uint16(b[4:]), binary.BigEndian.Uint32(b[12:]), binary.BigEndian.Uint32(b[16:]),
		binary.BigEndian.Uint64(b[24:]); slid != 0xffff || sqp != 0 || st != 0 || l != 256 {
		t.Errorf("response header: slid %#x sqp %d status %d length %d; want 0xffff 0 0 256", slid, sqp, st, l)
	}

	// A datagram that is not a whole request is dropped, and the client stays.
	if _, err := c.data.Write(req[:100]); err != nil {
		t.Fatal(err)
	}
	if port := c.call(3, nil); binary.LittleEndian.Uint16(port[0:]) != lid {
		t.Error("the client is gone after a short datagram")
	}
	c.call(2, nil) // SIM_CTL_DISCONNECT
	if n := s.Clients(); n != 0 {
		t.Errorf("%d clients after the disconnect, want 0", n)
	}
}

// TestDeadClientReaped: a client that exits without disconnecting (its
// sockets closed) is detached when the next client connects, so its
// node takes a new request taker.
func TestDeadClientReaped(t *testing.T) {
	f, err := sim.New(mustFatTree(t), sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sock := fmt.Sprintf("simservereap%d", os.Getpid())
	s, err := Listen(f, Options{SockName: sock, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Close() })
	dead := rawDialISSM(t, sock, 7001)
	dead.ctl.Close()
	dead.data.Close()
	rawDialISSM(t, sock, 7002) // refused if the dead one still held the node
	if n := s.Clients(); n != 1 {
		t.Errorf("%d clients, want 1", n)
	}
}

func mustFatTree(t *testing.T) *sim.Topology {
	topo, err := sim.FatTree2(2, 1, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

func rawDialISSM(t *testing.T, sock string, pid uint32) *rawClient {
	return rawDial(t, sock, pid, "", true)
}

func connectAbstract(fd uintptr, name string) error {
	return syscall.Connect(int(fd), &syscall.SockaddrUnix{Name: "@" + name + "\x00"})
}
