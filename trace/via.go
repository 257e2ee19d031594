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

// ParseLinkPort is the one reading of a link end written as text:
// 0xGUID:PORT, the node GUID in hex with its 0x prefix (as ibtracer's
// reports and the metrics' node_guid write it) and the port in decimal,
// 1..254 (port 0 of a switch is no link). Anything else is an error
// saying what is wrong.
func ParseLinkPort(s string) (LinkPort, error) {
	g, p, ok := strings.Cut(s, ":")
	if !ok || strings.Contains(p, ":") {
		return LinkPort{}, fmt.Errorf("%q: want NODE_GUID:PORT, such as 0x0002c90300a1b2c3:4", s)
	}
	digits, hex := strings.CutPrefix(strings.ToLower(g), "0x")
	v, err := strconv.ParseUint(digits, 16, 64)
	if !hex || digits == "" || len(digits) > 16 || err != nil || v == 0 {
		return LinkPort{}, fmt.Errorf("%q: the node GUID %q is not 1..16 hex digits after 0x, not all zero", s, g)
	}
	n, err := strconv.ParseUint(p, 10, 8)
	if err != nil || n < 1 || n > 254 || p != strconv.FormatUint(n, 10) {
		return LinkPort{}, fmt.Errorf("%q: the port %q is not a port number 1..254", s, p)
	}
	return LinkPort{NodeGUID: ibmad.GUID(v), Port: uint8(n)}, nil
}

// LinkEnd is one end of a crossed link, as the trace saw it.
type LinkEnd struct {
	NodeGUID ibmad.GUID
	NodeDesc string
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
		return LinkEnd{NodeGUID: h.NodeGUID, NodeDesc: h.NodeDesc, Port: port}
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

func (e LinkEnd) String() string {
	return fmt.Sprintf("%q {%s}[%d]", e.NodeDesc, e.NodeGUID, e.Port)
}
