package ibmad

import (
	"errors"
	"fmt"
	"strings"
)

// Transport errors.
var (
	// ErrClosed is returned by a closed Transport or Engine.
	ErrClosed = errors.New("ibmad: closed")
	// ErrTimeout means a request got no response after all attempts.
	ErrTimeout = errors.New("ibmad: timeout")
	// ErrDeviceLost means the device went away (umad EIO/POLLERR); the
	// transport may come back, outstanding requests are failed.
	ErrDeviceLost = errors.New("ibmad: device lost")
	// ErrRequestRefused means the transport refused one request (the
	// kernel cannot address it, or the port cannot send its class): that
	// request fails, the device stays (docs/protocol.md, "Send errors").
	ErrRequestRefused = errors.New("ibmad: request refused")
)

// Well-known queue pair numbers and the GSI Q_Key (IBA 13.4.6).
const (
	QP0     = 0
	QP1     = 1
	QP1QKey = 0x80010000
)

// Address is where a MAD goes (on send) or where it came from (on receive),
// the fields of the kernel's ib_user_mad_hdr (docs/protocol.md, "The umad kernel interface").
type Address struct {
	LID       uint16 // DLID on send (PermissiveLID for DR SMPs), SLID on receive
	QPN       uint32
	QKey      uint32
	SL        uint8
	PathBits  uint8
	PKeyIndex uint16
	// GRH, when GRHPresent.
	GRHPresent bool
	GIDIndex   uint8
	HopLimit   uint8
	TClass     uint8
	FlowLabel  uint32
	GID        GID
}

// DRAddress is the address of every directed-route SMP.
func DRAddress() Address { return Address{LID: PermissiveLID, QPN: QP0} }

// SMPAddress is the address of a LID-routed SMP to lid.
func SMPAddress(lid uint16) Address { return Address{LID: lid, QPN: QP0} }

// GSIAddress is the address of a GMP (SA, PerfMgt, vendor) to lid on QP1.
func GSIAddress(lid uint16, sl uint8) Address {
	return Address{LID: lid, QPN: QP1, QKey: QP1QKey, SL: sl}
}

// String names the destination as the kernel is given it: the LID (left
// out when 0 and a GRH is present, as for a requester known by GID), the
// GID and the GRH's fields, the QP and a non-zero SL.
func (a Address) String() string {
	if a.LID == PermissiveLID && a.QPN == QP0 {
		return "DR"
	}
	var b strings.Builder
	if a.LID != 0 || !a.GRHPresent {
		fmt.Fprintf(&b, "lid %d ", a.LID)
	}
	if a.GRHPresent {
		fmt.Fprintf(&b, "gid %s ", a.GID)
	}
	fmt.Fprintf(&b, "qp %d", a.QPN)
	if a.SL != 0 {
		fmt.Fprintf(&b, " sl %d", a.SL)
	}
	if a.GRHPresent {
		fmt.Fprintf(&b, " (GRH: sgid index %d, hop limit %d, tclass %d, flow label %d)", a.GIDIndex, a.HopLimit, a.TClass, a.FlowLabel)
	}
	return b.String()
}

// Requester names whoever sent a request, the same however it addressed
// us (docs/protocol.md, "What the agent answers"): its LID when it has
// one in our subnet, with a GRH or without; its GID when it has no LID
// (LID 0: a fabric without LIDs) or is beyond a router (a GID of another
// subnet, whose LID is the router's, shared by everyone behind it). The
// agent's rate limit and the engine's reply queue count by it.
type Requester struct {
	LID uint16
	GID GID // when LID cannot tell
}

// RequesterOf is the requester of a MAD received from a, on a port whose
// subnet prefix is prefix (0: the default, fe80::/64). A GRH whose source
// GID has our prefix or the link-local one comes from our subnet: its
// LID names the requester, as it does when the requester leaves the GRH
// out.
func RequesterOf(a Address, prefix uint64) Requester {
	if !a.GRHPresent || a.GID.IsZero() {
		return Requester{LID: a.LID}
	}
	if prefix == 0 {
		prefix = DefaultGIDPrefix
	}
	if p := a.GID.Prefix(); a.LID != 0 && (p == prefix || p == DefaultGIDPrefix) {
		return Requester{LID: a.LID}
	}
	return Requester{GID: a.GID}
}

// String is "lid N" or "gid G".
func (r Requester) String() string {
	if r.GID.IsZero() {
		return fmt.Sprintf("lid %d", r.LID)
	}
	return "gid " + r.GID.String()
}

// Packet is a MAD with its address and transport metadata. Packets are
// reused: a Transport must not keep a Packet it was given after returning.
type Packet struct {
	Addr Address
	MAD  MAD
	// Timeout is the response timeout in milliseconds that a kernel
	// transport waits for on a request (umad: must be > 0 to receive the
	// response). Zero for responses.
	TimeoutMS uint32
	// TimedOut is set on receive when the transport reports that a request
	// it sent got no response (umad status ETIMEDOUT). MAD then holds the
	// request's header with its TID.
	TimedOut bool
	// InPort is the local port number a received MAD arrived on, when
	// InPortKnown. A switch's port-0 agent on real hardware cannot tell.
	InPort      uint8
	InPortKnown bool
	// Len is the length of the received message when the transport knows
	// it (ibsim: the sender's length, at most 256; umad: the kernel's
	// reassembled RMPP length), 0 when it does not.
	Len int
	// RMPPTail is the rest of a message longer than one MAD that the
	// transport reassembled (the kernel's RMPP: the data parts of segments
	// 2..n, docs/protocol.md "RMPP"). A transport sets it to a slice it
	// does not reuse; nil otherwise.
	RMPPTail []byte
}

// Registration asks a Transport to deliver unsolicited requests of a class
// (and, for vendor range 2, an OUI) whose method is in Methods.
type Registration struct {
	Class   MgmtClass
	Version uint8
	OUI     OUI // vendor range 2 only
	Methods []Method
	RMPP    bool
}

// PortAttributes describes the local port a Transport is bound to.
type PortAttributes struct {
	CA        string // device name, e.g. mlx5_0, or the simulated node name
	PortNum   uint8  // 0 for a switch
	NodeType  NodeType
	NodeGUID  GUID
	PortGUID  GUID
	NodeDesc  string
	LID       uint16
	LMC       uint8
	SMLID     uint16
	SMSL      uint8
	GIDPrefix uint64
	State     PortState
	PhysState PhysState
}

// GID returns the port's GID 0.
func (p PortAttributes) GID() GID {
	prefix := p.GIDPrefix
	if prefix == 0 {
		prefix = DefaultGIDPrefix
	}
	return MakeGID(prefix, p.PortGUID)
}

// Transport sends and receives MADs for one local port.
type Transport interface {
	// Send transmits p. The Transport copies what it needs before it
	// returns; p may be reused at once.
	Send(p *Packet) error
	// Recv blocks until a MAD (or a timeout report) arrives and copies it
	// into p. It returns ErrClosed after Close, or an error wrapping
	// ErrDeviceLost when the device goes away.
	Recv(p *Packet) error
	// Register asks for unsolicited requests of a class.
	Register(r Registration) error
	// Port describes the local port.
	Port() (PortAttributes, error)
	// Close releases the port and unblocks Recv.
	Close() error
}
