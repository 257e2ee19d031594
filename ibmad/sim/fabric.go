package sim

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// GUID bases ibsim uses when a topology names none (ibsim sim_net.c), so
// that the same file gives the same GUIDs here and in ibsim.
const (
	caGUIDBase     = 0x100000
	switchGUIDBase = 0x200000
	routerGUIDBase = 0x300000
)

// Options configure a Fabric.
type Options struct {
	// LMC of CA ports (switch port 0 always gets LMC 0, as OpenSM does by
	// default).
	LMC uint8
	// SMNode names the node that runs the SM and answers SA queries;
	// default: the first CA of the topology.
	SMNode string
	// HopLatency is added for every link a MAD crosses.
	HopLatency time.Duration
	// Seed varies the drop decisions of lossy ports (SetDropRate). The
	// same seed loses the same MADs in every run, whatever order
	// concurrent senders reach the fabric in (loss.go).
	Seed uint64
	// ReportLoss reports every request the fabric loses (dropped on a
	// lossy or dead link, unroutable, unanswered by the node it reached)
	// to its sender at once, as a timeout report (ibmad.Packet.TimedOut),
	// and the loss of an answer to the requester: what the kernel reports
	// when a request's timeout runs out, without the wait. A test can then
	// give its engines a timeout far longer than any scheduling delay, so
	// that only the fabric's losses time out, never a busy machine. A
	// request that reached a transport that never answers still waits
	// for the engine's timeout.
	ReportLoss bool
	// GIDPrefix of every port; default fe80::/64.
	GIDPrefix uint64
	// SwitchLocalPortZero makes every switch's SMA answer LocalPortNum 0
	// to LID-routed SMPs, as ibsim does; default: the port the SMP arrived
	// on, as real switches do (sma.go; per switch:
	// SetSwitchLocalPortZero).
	SwitchLocalPortZero bool
}

// Fabric is a simulated subnet.
type Fabric struct {
	opts Options

	mu       sync.RWMutex // guards topology, LIDs, LFTs, faults
	nodes    []*Node
	byName   map[string]*Node
	byGUID   map[ibmad.GUID]*Node
	portGUID map[ibmad.GUID]*Port
	lids     []*Port // LID -> port (base LID and its LMC range)
	maxLID   uint16
	sm       *Node
	switches []*Node

	rng       atomic.Uint64
	nextHiTID atomic.Uint32
	mads      atomic.Uint64 // MADs injected, for tests and benchmarks

	smpMode atomic.Int32    // fault: only the SM node may send SMPs (forward.go)
	drops   dataPlaneDrops  // SLs the switches drop, MADs dropped for SL or DGID (forward.go)
	sa      subnetAdmin     // the SA at the SM node (sa.go)
	mc      multicastTables // the switches' multicast forwarding tables (multicast.go)
	routers []*Router       // to other subnets (router.go), guarded by mu
}

// Node is a simulated CA, switch or router.
type Node struct {
	f        *Fabric
	Name     string
	Desc     string
	Type     ibmad.NodeType
	GUID     ibmad.GUID
	VendorID uint32
	DeviceID uint16
	// Ports[0] is switch port 0 (unused on CAs); Ports[1..NumPorts].
	Ports []*Port

	// Switch state.
	swIdx    int
	lft      []uint8
	override map[uint16]uint8 // data plane entries that differ from lft

	silent     atomic.Bool  // fault: the node answers nothing
	hideIn     atomic.Bool  // fault: its agents cannot tell the ingress port (chaos.go)
	muteAgents atomic.Bool  // fault: its agents (and the kernel for them) answer nothing (chaos.go)
	localPort  atomic.Int32 // LocalPortNum of LID-routed SMPs at a switch (sma.go)
	pma        pmaAgent     // its PMA and what is wrong with it (pma.go)
	transports atomic.Pointer[[]*Transport]
}

// Port is a port of a node.
type Port struct {
	Node   *Node
	Num    uint8
	GUID   ibmad.GUID
	LID    uint16
	LMC    uint8
	Remote *Port
	State  ibmad.PortState
	Phys   ibmad.PhysState

	dropPPM  atomic.Uint32                // fault: parts per million of MADs dropped on egress
	training atomic.Pointer[LinkTraining] // fault: trained below capability (sma.go)
	ctr      portCounters                 // what its PMA counts (counters.go)
}

// NumPorts returns the number of external ports.
func (n *Node) NumPorts() int { return len(n.Ports) - 1 }

// IsSwitch reports whether n is a switch.
func (n *Node) IsSwitch() bool { return n.Type == ibmad.NodeTypeSwitch }

// PortGUID returns the GUID NodeInfo reports for port p: port 0's for a
// switch, the port's own for a CA.
func (n *Node) portGUID(p uint8) ibmad.GUID {
	if n.IsSwitch() {
		return n.GUID
	}
	return n.Ports[p].GUID
}

// LIDRange returns the first and last LID of p.
func (p *Port) LIDRange() (uint16, uint16) {
	return p.LID, p.LID + uint16(1)<<p.LMC - 1
}

func (p *Port) hasLID(lid uint16) bool {
	return p.LID != 0 && lid >= p.LID && lid <= p.LID+uint16(1)<<p.LMC-1
}

// linkUp reports whether p has an active link.
func (p *Port) linkUp() bool { return p.Remote != nil && p.Phys == ibmad.PhysStateLinkUp }

// New builds a fabric from a topology, assigns LIDs and computes routes.
func New(t *Topology, opts Options) (*Fabric, error) {
	if opts.LMC > 7 {
		return nil, fmt.Errorf("sim: LMC %d exceeds 7", opts.LMC)
	}
	if opts.GIDPrefix == 0 {
		opts.GIDPrefix = ibmad.DefaultGIDPrefix
	}
	f := &Fabric{
		opts:     opts,
		byName:   make(map[string]*Node, len(t.Nodes)),
		byGUID:   make(map[ibmad.GUID]*Node, len(t.Nodes)),
		portGUID: make(map[ibmad.GUID]*Port, len(t.Nodes)*2),
	}
	f.sa.f = f
	f.rng.Store(opts.Seed*0x9E3779B97F4A7C15 + 1)
	guids := map[ibmad.NodeType]uint64{ibmad.NodeTypeCA: caGUIDBase, ibmad.NodeTypeSwitch: switchGUIDBase,
		ibmad.NodeTypeRouter: routerGUIDBase}
	for _, ns := range t.Nodes {
		n := &Node{f: f, Name: ns.Name, Desc: ns.Desc, Type: ns.Type, GUID: ns.GUID,
			VendorID: ns.VendorID, DeviceID: ns.DeviceID, swIdx: -1}
		n.pma.node = n
		if n.Desc == "" {
			n.Desc = n.Name
		}
		if n.GUID == 0 {
			n.GUID = ibmad.GUID(guids[ns.Type])
			if ns.Type == ibmad.NodeTypeSwitch {
				guids[ns.Type]++
			} else {
				guids[ns.Type] += uint64(ns.NumPorts) + 1
			}
		}
		if n.VendorID == 0 {
			n.VendorID = 0x0002c9
		}
		if _, dup := f.byGUID[n.GUID]; dup {
			return nil, fmt.Errorf("%s:%d: node %q: GUID %s already in use", t.Source, ns.Line, n.Name, n.GUID)
		}
		n.Ports = make([]*Port, ns.NumPorts+1)
		for p := range n.Ports {
			port := &Port{Node: n, Num: uint8(p), State: ibmad.PortStateDown, Phys: ibmad.PhysStatePolling}
			if n.IsSwitch() {
				port.GUID = n.GUID
			} else {
				port.GUID = n.GUID + ibmad.GUID(p)
				if p > 0 {
					f.portGUID[port.GUID] = port
				}
			}
			n.Ports[p] = port
		}
		if n.IsSwitch() {
			n.Ports[0].State, n.Ports[0].Phys = ibmad.PortStateActive, ibmad.PhysStateLinkUp
			f.portGUID[n.GUID] = n.Ports[0]
			n.swIdx = len(f.switches)
			f.switches = append(f.switches, n)
		}
		f.nodes = append(f.nodes, n)
		f.byName[n.Name] = n
		f.byGUID[n.GUID] = n
	}
	for _, ns := range t.Nodes {
		n := f.byName[ns.Name]
		for p := 1; p <= ns.NumPorts; p++ {
			l := ns.Links[p]
			if l.Peer == "" {
				continue
			}
			peer := f.byName[l.Peer]
			if peer == nil || l.Port < 1 || l.Port > peer.NumPorts() {
				return nil, fmt.Errorf("%s:%d: %s[%d]: bad peer %q[%d]", t.Source, l.Line, n.Name, p, l.Peer, l.Port)
			}
			a, b := n.Ports[p], peer.Ports[l.Port]
			a.Remote, b.Remote = b, a
			a.State, a.Phys = ibmad.PortStateActive, ibmad.PhysStateLinkUp
			b.State, b.Phys = ibmad.PortStateActive, ibmad.PhysStateLinkUp
		}
	}
	if opts.SMNode != "" {
		f.sm = f.byName[opts.SMNode]
		if f.sm == nil {
			return nil, fmt.Errorf("sim: SM node %q is not in the topology", opts.SMNode)
		}
	} else {
		for _, n := range f.nodes {
			if n.Type == ibmad.NodeTypeCA {
				f.sm = n
				break
			}
		}
		if f.sm == nil {
			f.sm = f.nodes[0]
		}
	}
	f.assignLIDs()
	f.computeRoutes()
	return f, nil
}

// Node returns the node named name, or nil.
func (f *Fabric) Node(name string) *Node { return f.byName[name] }

// NodeByGUID returns the node with NodeGUID g, or nil.
func (f *Fabric) NodeByGUID(g ibmad.GUID) *Node { return f.byGUID[g] }

// Nodes returns every node in topology order.
func (f *Fabric) Nodes() []*Node { return f.nodes }

// SMNode returns the node that answers SA queries.
func (f *Fabric) SMNode() *Node { return f.sm }

// SMLID returns the SM's LID.
func (f *Fabric) SMLID() uint16 {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.smLIDLocked()
}

func (f *Fabric) smLIDLocked() uint16 {
	if f.sm.IsSwitch() {
		return f.sm.Ports[0].LID
	}
	for _, p := range f.sm.Ports[1:] {
		if p.LID != 0 {
			return p.LID
		}
	}
	return 0
}

// PortByLID returns the port that owns lid, or nil.
func (f *Fabric) PortByLID(lid uint16) *Port {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if int(lid) >= len(f.lids) {
		return nil
	}
	return f.lids[lid]
}

// LIDOf returns the base LID of node name's port: port 0 of a switch, and
// for a CA the given port, or with port 0 its first port that has a LID.
func (f *Fabric) LIDOf(name string, port int) (uint16, error) {
	n := f.byName[name]
	if n == nil {
		return 0, fmt.Errorf("sim: no node %q", name)
	}
	if port < 0 || port > n.NumPorts() {
		return 0, fmt.Errorf("sim: node %q has no port %d", name, port)
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	if n.IsSwitch() {
		return n.Ports[0].LID, nil
	}
	if port == 0 { // a CA's first port with a LID
		for _, p := range n.Ports[1:] {
			if p.LID != 0 {
				return p.LID, nil
			}
		}
	}
	return n.Ports[port].LID, nil
}

// CALIDs returns the base LID of every linked CA port, ascending.
func (f *Fabric) CALIDs() []uint16 {
	f.mu.RLock()
	defer f.mu.RUnlock()
	var out []uint16
	for l, p := range f.lids {
		if p != nil && p.Node.Type != ibmad.NodeTypeSwitch && p.LID == uint16(l) {
			out = append(out, uint16(l))
		}
	}
	return out
}

// MADs returns the number of MADs injected into the fabric so far.
func (f *Fabric) MADs() uint64 { return f.mads.Load() }

// random returns a pseudo-random uint32 (splitmix64 on an atomic state).
func (f *Fabric) random() uint32 {
	z := f.rng.Add(0x9E3779B97F4A7C15)
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return uint32(z ^ (z >> 31))
}

// Attach opens a transport at port of node name. Port 0 picks port 0 of a
// switch, or the first linked port of a CA. Several transports may be
// attached to one node; responses reach the one whose request it was, by
// the upper 32 bits of the TID, as the kernel routes them.
func (f *Fabric) Attach(name string, port int) (*Transport, error) {
	n := f.byName[name]
	if n == nil {
		return nil, fmt.Errorf("sim: no node %q in the fabric", name)
	}
	if port < 0 || port > n.NumPorts() {
		return nil, fmt.Errorf("sim: node %q has no port %d (1..%d)", name, port, n.NumPorts())
	}
	var p *Port
	switch {
	case n.IsSwitch():
		p = n.Ports[0]
	case port == 0:
		for _, q := range n.Ports[1:] {
			if q.Remote != nil {
				p = q
				break
			}
		}
		if p == nil {
			p = n.Ports[1]
		}
	default:
		p = n.Ports[port]
	}
	t := &Transport{f: f, node: n, port: p, hiTID: f.nextHiTID.Add(1),
		ready: make(chan struct{}, 1), closed: make(chan struct{})}
	t.pool.New = func() any { return new(ibmad.Packet) }
	n.attach(t)
	return t, nil
}

// port returns port of node name, which a fault names.
func (f *Fabric) port(name string, port int) (*Port, error) {
	n := f.byName[name]
	if n == nil {
		return nil, fmt.Errorf("sim: no node %q", name)
	}
	if port < 0 || port > n.NumPorts() || (port == 0 && !n.IsSwitch()) {
		return nil, fmt.Errorf("sim: node %q has no port %d", name, port)
	}
	return n.Ports[port], nil
}

// switchEgress checks that name is a switch and port one of its ports
// (or LFTNoRoute), as a forwarding entry needs.
func (f *Fabric) switchEgress(name string, port uint8) (*Node, error) {
	n := f.byName[name]
	if n == nil || !n.IsSwitch() {
		return nil, fmt.Errorf("sim: %q is not a switch", name)
	}
	if int(port) > n.NumPorts() && port != ibmad.LFTNoRoute {
		return nil, fmt.Errorf("sim: switch %q has no port %d", name, port)
	}
	return n, nil
}
