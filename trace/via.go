package trace

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// LinkPort names a link by one of its ends: a node GUID and the port
// number of that node (ibtracer --via GUID:PORT, /traces?link=GUID:PORT;
// docs/runbook.md, "Which destinations cross a link"). Either end names
// the same link.
type LinkPort struct {
	NodeGUID ibmad.GUID
	Port     uint8
}

func (l LinkPort) String() string { return fmt.Sprintf("%s:%d", l.NodeGUID, l.Port) }

// LinkRef is a link end as a person writes it: NODE:PORT, the node by
// its node GUID (0x…) or by its name (a node-name-map name or a node
// description, Nodes.Lookup), the port 1..254. Resolve turns it into a
// LinkPort.
type LinkRef struct {
	Node string
	Port uint8
}

func (r LinkRef) String() string { return fmt.Sprintf("%s:%d", r.Node, r.Port) }

// ParseLinkRef reads NODE:PORT. The port follows the last colon, so a
// name may hold colons; a node that starts with 0x must be a node GUID
// (ParseNodeGUID's reading), anything else is a name.
func ParseLinkRef(s string) (LinkRef, error) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return LinkRef{}, fmt.Errorf("%q: want NODE:PORT, the node by name or GUID, such as L1:5 or 0x0002c90300a1b2c3:4", echo(s))
	}
	node, p := s[:i], s[i+1:]
	if node == "" {
		return LinkRef{}, fmt.Errorf("%q: no node before the port; want NODE:PORT, such as L1:5", echo(s))
	}
	if strings.HasPrefix(strings.ToLower(node), "0x") {
		if _, ok := ParseNodeGUID(node); !ok {
			return LinkRef{}, fmt.Errorf("%q: the node GUID %q is not 1..16 hex digits after 0x, not all zero", echo(s), echo(node))
		}
	}
	n, err := strconv.ParseUint(p, 10, 8)
	if err != nil || n < 1 || n > 254 || p != strconv.FormatUint(n, 10) {
		return LinkRef{}, fmt.Errorf("%q: the port %q is not a port number 1..254", echo(s), echo(p))
	}
	return LinkRef{Node: node, Port: uint8(n)}, nil
}

// Resolve looks r's node up among ns (Nodes.Lookup: a GUID as is, a name
// when exactly one node has it).
func (r LinkRef) Resolve(ns *Nodes) (LinkPort, error) {
	g, err := ns.Lookup(r.Node)
	if err != nil {
		return LinkPort{}, err
	}
	return LinkPort{NodeGUID: g, Port: r.Port}, nil
}

// LinkEnd is one end of a crossed link, as the trace saw it.
type LinkEnd struct {
	NodeGUID ibmad.GUID
	NodeDesc string
	NodeName string // its node-name-map name, when the hops were named (NameHops)
	Port     uint8
}

// Crossing is where a path crosses a link: it leaves hop Hop-1 by
// From.Port and enters hop Hop by To.Port (the numbering of
// linkhealth.Link). Far is false when the trace ended at From (it failed
// there, leaving by that port): To is then unknown.
type Crossing struct {
	Hop  int
	From LinkEnd
	To   LinkEnd
	Far  bool
}

// Crosses says where r's path crosses the link l names, in either
// direction: the first pair of hops joined by a link one of whose ends
// is l, or, when the trace ended early, its last hop leaving by l. A
// failed trace that did not get that far says nothing (ok false), and
// neither does a path that does not cross l.
func (r *Result) Crosses(l LinkPort) (Crossing, bool) {
	at := func(h *Hop, port uint8) bool { return h.NodeGUID == l.NodeGUID && port == l.Port }
	end := func(h *Hop, port uint8) LinkEnd {
		return LinkEnd{NodeGUID: h.NodeGUID, NodeDesc: h.NodeDesc, NodeName: h.NodeName, Port: port}
	}
	for i := 1; i < len(r.Hops); i++ {
		a, b := &r.Hops[i-1], &r.Hops[i]
		if at(a, a.OutPort) || at(b, b.InPort) {
			return Crossing{Hop: b.Hop, From: end(a, a.OutPort), To: end(b, b.InPort), Far: true}, true
		}
	}
	if n := len(r.Hops); n > 0 && r.Status != StatusOK {
		last := &r.Hops[n-1]
		if last.OutPort != 0 && at(last, last.OutPort) {
			return Crossing{Hop: last.Hop + 1, From: end(last, last.OutPort)}, true
		}
	}
	return Crossing{}, false
}

// String is the crossing for a person: hop N, NODE {GUID}[PORT] ->
// NODE {GUID}[PORT].
func (c Crossing) String() string {
	to := "(not reached)"
	if c.Far {
		to = c.To.String()
	}
	return fmt.Sprintf("hop %d, %s -> %s", c.Hop, c.From, to)
}

// String is the end for a person, ibtracert's way: its site name (else
// its description) quoted, its GUID, its port.
func (e LinkEnd) String() string {
	n := e.NodeName
	if n == "" {
		n = e.NodeDesc
	}
	return fmt.Sprintf("%q {%s}[%d]", n, e.NodeGUID, e.Port)
}
