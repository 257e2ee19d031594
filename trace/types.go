package trace

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// Destination is what to trace to: exactly one of LID, GID, GUID and Node.
type Destination struct {
	Name string // label; defaults to the address
	LID  uint16
	GID  ibmad.GID
	GUID ibmad.GUID
	Node string // node description, resolved through SA NodeRecord
	// Port of Node to trace (LocalPortNum); 0: the node's first port the
	// SA knows (port 0 of a switch). Only with Node.
	Port uint8
}

// Args returns the ibtracer command-line arguments that trace d.
func (d Destination) Args() string { return d.write(argsForm) }

// Kind names which address a destination uses.
func (d Destination) Kind() string {
	switch {
	case d.LID != 0:
		return "lid"
	case !d.GID.IsZero():
		return "gid"
	case d.GUID != 0:
		return "guid"
	case d.Node != "":
		return "node"
	}
	return ""
}

// DestinationError is an invalid destination. Field is the address key
// at fault (lid, gid, guid, node or port), or "" when the destination as
// a whole is (no address, or more than one).
type DestinationError struct {
	Field string
	Msg   string
}

func (e *DestinationError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

func badAddress(field, format string, a ...any) *DestinationError {
	return &DestinationError{Field: field, Msg: fmt.Sprintf(format, a...)}
}

// Validate is the one check of a destination's address: exactly one of
// LID, GID, GUID and Node, a unicast LID, and a Port only with Node. Its
// error is a *DestinationError.
func (d Destination) Validate() error {
	if d.LID >= 0xC000 {
		return badAddress("lid", "%d is not a unicast LID (1..49151)", d.LID)
	}
	n := 0
	for _, set := range []bool{d.LID != 0, !d.GID.IsZero(), d.GUID != 0, d.Node != ""} {
		if set {
			n++
		}
	}
	if n != 1 {
		return badAddress("", "set exactly one of lid, gid, guid or node (found %d)", n)
	}
	if d.Port != 0 && d.Node == "" {
		return badAddress("port", "a port applies only to a node destination")
	}
	return nil
}

// ParseDestination is the one reading of a destination written as text,
// by the configuration file's keys or the ibtracer command's flags (""
// and 0: not given): it parses the GID and the port GUID, bounds the node
// description and the port, and Validates the result. Its error is a
// *DestinationError.
func ParseDestination(lid uint16, gid, guid, node string, port int) (Destination, error) {
	d := Destination{LID: lid, Node: node}
	var err error
	if gid != "" {
		if d.GID, err = ibmad.ParseGID(gid); err != nil || d.GID.IsZero() {
			return Destination{}, badAddress("gid", "%q is not a GID such as fe80::2:c903:a1:b2c3", gid)
		}
	}
	if guid != "" {
		if d.GUID, err = ibmad.ParseGUID(guid); err != nil || d.GUID == 0 {
			return Destination{}, badAddress("guid", "%q is not a port GUID such as 0x0002c90300a1b2c3", guid)
		}
	}
	if len(node) > ibmad.NodeDescriptionSize {
		return Destination{}, badAddress("node", "longer than %d bytes", ibmad.NodeDescriptionSize)
	}
	if port != 0 {
		d.Port = 1 // given: Validate refuses a port without a node first
	}
	if err := d.Validate(); err != nil {
		return Destination{}, err
	}
	if port < 0 || port > 254 {
		return Destination{}, badAddress("port", "%d is not a port number (1..254)", port)
	}
	d.Port = uint8(port)
	return d, nil
}

// ParseOUI is the one reading of a vendor OUI written as text, in the
// configuration file (oui:) and on the command line (--oui): hexadecimal
// with a 0x prefix, as OUIs are written (0x001405), 24 bits, not 0.
// Digits without the prefix are refused rather than guessed at: 001405
// would be 0x1405 to a reader of hex and 773 to a reader of C's octal.
func ParseOUI(s string) (ibmad.OUI, error) {
	digits, ok := strings.CutPrefix(strings.ToLower(s), "0x")
	v, err := strconv.ParseUint(digits, 16, 32)
	if !ok || err != nil || v == 0 || v > 0xFFFFFF {
		return 0, fmt.Errorf("%q is not a 24-bit hex number such as 0x001405", s)
	}
	return ibmad.OUI(v), nil
}

func (d Destination) String() string {
	if d.Name != "" {
		return d.Name
	}
	return d.Address()
}

// Address formats the destination's address ("lid 5", "guid 0x...").
func (d Destination) Address() string { return d.write(addressForm) }

// addrForm is how one rendering of an address writes each kind: Args
// (ibtracer's flags) and Address (the labels and logs) differ only here.
type addrForm struct{ lid, gid, guid, node, port, none string }

var (
	argsForm    = addrForm{lid: "-l %d", gid: "-g %s", guid: "-G %s", node: "--node %q", port: " --port %d"}
	addressForm = addrForm{lid: "lid %d", gid: "gid %s", guid: "guid %s", node: "node %q", port: " port %d", none: "(none)"}
)

func (d Destination) write(f addrForm) string {
	switch d.Kind() {
	case "lid":
		return fmt.Sprintf(f.lid, d.LID)
	case "gid":
		return fmt.Sprintf(f.gid, d.GID)
	case "guid":
		return fmt.Sprintf(f.guid, d.GUID)
	case "node":
		if d.Port != 0 {
			return fmt.Sprintf(f.node+f.port, d.Node, d.Port)
		}
		return fmt.Sprintf(f.node, d.Node)
	}
	return f.none
}

// AgentStatus is what the vendor agent said about a hop.
type AgentStatus string

// Agent verdicts; their values are metric label values and JSON strings.
const (
	AgentSource    AgentStatus = "source"    // the local node: not checked
	AgentValidated AgentStatus = "validated" // arrived on the expected port, over the traced path's link into the hop
	// AgentValidatedOtherLink: the validation MAD arrived on the port the
	// tables predict, but its route's last link is not the traced path's
	// link into the hop (a parallel cable, another neighbour): the traced
	// link was not checked (docs/protocol.md, "What a verdict covers").
	AgentValidatedOtherLink AgentStatus = "validated_other_link"
	AgentIngressUnknown     AgentStatus = "ingress_unknown" // agent answered but cannot tell the port (switch port 0)
	AgentMismatch           AgentStatus = "mismatch"        // status 7: arrived on another port, or at another node
	// AgentMismatchOtherLink: a mismatch seen by a validation MAD whose
	// route's last link is not the traced path's link into the hop (the
	// hop's own LID is routed in by another neighbour): the fabric
	// diverged from its tables somewhere, but not on this path as far as
	// this MAD can tell, and the traced link was not checked
	// (docs/protocol.md, "What a verdict covers"). It does not make the
	// trace port_mismatch.
	AgentMismatchOtherLink AgentStatus = "mismatch_other_link"
	AgentUnsupported       AgentStatus = "unsupported" // no agent: the node answered "no such class" (0x000C)
	AgentLost              AgentStatus = "lost"        // asked, and no usable answer (a lost MAD, a rate limit, the agent gone)
	AgentNotAsked          AgentStatus = "not_asked"   // not asked: validation off, no LID, or the trace failed first
	// AgentUnproven: an answer in the seed format (ExtVersion 0, no
	// NodeGUID) when nothing else proved who answered: the hop's LID was
	// not read from the node itself, or the request crossed a router
	// (validate.go).
	AgentUnproven AgentStatus = "unproven"
)

// Hop is one node of a traced path; Hops[0] is the local node.
type Hop struct {
	Hop          int
	NodeGUID     ibmad.GUID
	PortGUID     ibmad.GUID
	NodeType     ibmad.NodeType
	NodeDesc     string
	NodeName     string // the site name of a node-name map, when the caller set one
	LID          uint16
	LMC          uint8
	InPort       uint8 // port the path enters by (0 at the source)
	OutPort      uint8 // port the path leaves by (0 at the destination)
	DRPath       ibmad.DRPath
	Agent        AgentStatus
	ValidatedBy  Validator // who gave Agent: the vendor agent (its kernel) or the SMA (sma.go); "" when nobody was asked
	ActualInPort uint8     // from the agent, when it knows; from the SMA, its LocalPortNum as read (0: it cannot tell)
	// ExpectedInPort and RouteHops describe the LID route to the LID the
	// validation MAD was addressed to; ExpectedFrom and ExpectedFromPort
	// are that route's last link's near end: the node and egress port the
	// MAD was to arrive from (0: not validated), so that a mismatch names
	// the link the tables route by even when the traced path enters the
	// hop by another (localize.FromTrace).
	ExpectedInPort   uint8
	ExpectedFromPort uint8
	RouteHops        int
	ExpectedFrom     ibmad.GUID
	// ExpectedFromName is ExpectedFrom's site name or description, when
	// the trace knows one (NameHops, or the node is on the path).
	ExpectedFromName string
	RTT              time.Duration // the directed-route NodeInfo of the walk, or of the agent's answer
	AgentRTT         time.Duration
	// Diverged names the switch whose forwarding diverged from its table,
	// for a mismatch it can be told from (verdicts.go); nil otherwise.
	Diverged  *Divergence
	numPorts  uint8
	wrongNode bool // the validation MAD was answered by another node than the walk found
	// lidOwn: the walk read LID from the node itself (its PortInfo by
	// directed route), so an answer the engine matched as coming from
	// that LID is the node's (validate.go).
	lidOwn bool
}

// Status is a trace's outcome.
type Status string

// Trace outcomes.
const (
	StatusOK          Status = "ok"
	StatusMismatch    Status = "mismatch"
	StatusUnreachable Status = "unreachable"
	StatusTooLong     Status = "too_long"
	StatusResolve     Status = "resolve_failed"
	StatusDevice      Status = "device_error"
)

// Reason is a bounded failure reason (a metric label value).
type Reason string

// Failure reasons.
const (
	ReasonNone      Reason = ""
	ReasonNoRoute   Reason = "no_route"
	ReasonPortDown  Reason = "port_down"
	ReasonTimeout   Reason = "timeout"
	ReasonLoop      Reason = "loop"
	ReasonTooLong   Reason = "too_many_hops"
	ReasonSA        Reason = "sa_error"
	ReasonDevice    Reason = "device"
	ReasonMismatch  Reason = "port_mismatch"
	ReasonBadConfig Reason = "bad_destination"
	// ReasonWrongPort: the DLID a GUID, GID or node destination resolved
	// to leads to another port, even resolved afresh (resolve.go).
	ReasonWrongPort Reason = "wrong_port"
)

// Error is a failed trace: a class and a message for a person.
type Error struct {
	Status Status
	Reason Reason
	Msg    string
	Err    error
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Err }

func fail(st Status, r Reason, err error, format string, a ...any) *Error {
	return &Error{Status: st, Reason: r, Err: err, Msg: fmt.Sprintf(format, a...)}
}

// Result is one trace.
type Result struct {
	Destination Destination
	DLID        uint16
	// Port is the destination port a node destination resolved to (its
	// LocalPortNum; 0 for a switch, or when the address named the port
	// by LID, GID or GUID).
	Port   uint8
	Status Status
	Reason Reason
	Err    error
	Hops   []Hop
	MADs   int
	// SharedFacts counts the answers the trace took from other traces'
	// questions instead of asking (Options.ShareFacts, facts.go).
	SharedFacts int
	Duration    time.Duration
	Start       time.Time
	FastPath    bool // confirmed a cached path instead of walking
	// Discovery is how the path was learnt: smp or sa (sawalk.go);
	// SARequests counts the SA record requests the walk sent (cached
	// records are not asked again).
	Discovery  Discovery
	SARequests int
	// From is the source LID of a trace from another port (TraceFrom,
	// ibtracert's SRC DST); 0: from the local port.
	From uint16
	// MLID is the multicast LID of a multicast trace (TraceMulticast,
	// ibtracert -m); 0: a unicast trace.
	MLID uint16
	// ValidationNote says, once per trace, why validation by the SMA was
	// not asked (sma.go): SMPs are refused here, the path came from the SA.
	ValidationNote string
	// Addressing is how the validation MADs were addressed: SL and GRH
	// (addressing.go); nil when the trace resolved nothing (a multicast
	// trace, a failure before resolution).
	Addressing *Addressing
	// Beyond is the part of the path past the router where it left the
	// subnet (status left_subnet; subnet.go); nil: it did not.
	Beyond *Beyond
}

// NameHops gives every hop of every result its site name, name(node
// GUID) ("" for none: a node-name-map's Name). A nil name names nothing.
// The exporter and the ibtracer command both name hops this way.
func NameHops(name func(guid uint64) string, rs ...*Result) {
	if name == nil {
		return
	}
	for _, r := range rs {
		for i := range r.Hops {
			r.Hops[i].NodeName = name(uint64(r.Hops[i].NodeGUID))
		}
		nameCheckedLinks(name, r.Hops) // verdicts.go
		nameDiverged(name, r.Hops)     // verdicts.go
	}
}

// PathHops is the number of links the path crosses: the nodes after the
// source, destination included (docs/metrics.md: ibtracer_path_hops).
func (r *Result) PathHops() int {
	if len(r.Hops) == 0 {
		return 0
	}
	return len(r.Hops) - 1
}

// Count returns how many hops have agent status s.
func (r *Result) Count(s AgentStatus) int {
	n := 0
	for _, h := range r.Hops {
		if h.Agent == s {
			n++
		}
	}
	return n
}

// Signature identifies the path: the node GUIDs and ports in order. Two
// traces with the same signature took the same path.
func (r *Result) Signature() string {
	s := ""
	for _, h := range r.Hops {
		s += fmt.Sprintf("%d>%s>%d;", h.InPort, h.NodeGUID, h.OutPort)
	}
	return s
}

// statusRank orders the outcomes from best to worst: a trace that fell
// short of its destination is worse the earlier it stopped (too long,
// unreachable, not resolved, no device), and a port mismatch, a wrong
// route the fabric is using, is the worst of all. ibtracer's exit status
// follows the same order (cmd/ibtracer, "Exit status").
var statusRank = map[Status]int{StatusOK: 0, StatusLeftSubnet: 0, StatusTooLong: 1, StatusUnreachable: 2, StatusResolve: 3,
	StatusDevice: 4, StatusMismatch: 5}

// Worse says whether s is a worse outcome than t. A status the package
// does not know counts as a device error.
func (s Status) Worse(t Status) bool { return s.rank() > t.rank() }

func (s Status) rank() int {
	if r, ok := statusRank[s]; ok {
		return r
	}
	return statusRank[StatusDevice]
}

// Succeeded says whether s is a success: ok, or left_subnet (the path
// left the subnet at a router whose far side answered). Exit statuses,
// trace_success and the alerts count both as one.
func (s Status) Succeeded() bool { return s == StatusOK || s == StatusLeftSubnet }

// Walked says whether a trace of status s walked its whole path in this
// subnet, so that its hops are the path: a success or a port mismatch.
func (s Status) Walked() bool { return s.Succeeded() || s == StatusMismatch }
