package sim

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/internal/readlimit"
)

// NodeSpec is one node of a topology.
type NodeSpec struct {
	Type     ibmad.NodeType
	Name     string // node id, unique
	Desc     string // NodeDescription; defaults to Name
	NumPorts int
	GUID     ibmad.GUID // 0: assigned as ibsim does
	VendorID uint32
	DeviceID uint16
	Line     int // source line, for messages
	// Links[p] is the far end of port p (index 0 unused); Peer "" = unconnected.
	Links []LinkEnd
}

// LinkEnd is the far end of a port.
type LinkEnd struct {
	Peer string
	Port int
	Line int
}

// Topology is a list of nodes and their cables.
type Topology struct {
	Source string // file name, for messages
	Nodes  []*NodeSpec
	index  map[string]*NodeSpec
}

// NewTopology returns an empty topology.
func NewTopology(source string) *Topology {
	return &Topology{Source: source, index: map[string]*NodeSpec{}}
}

// Node returns the node named name.
func (t *Topology) Node(name string) *NodeSpec { return t.index[name] }

// AddNode adds a node with numPorts ports and no links.
func (t *Topology) AddNode(typ ibmad.NodeType, name string, numPorts int) (*NodeSpec, error) {
	if _, dup := t.index[name]; dup {
		return nil, fmt.Errorf("node %q defined twice", name)
	}
	if numPorts < 1 || numPorts > 254 {
		return nil, fmt.Errorf("node %q: %d ports, want 1..254", name, numPorts)
	}
	n := &NodeSpec{Type: typ, Name: name, NumPorts: numPorts, Links: make([]LinkEnd, numPorts+1)}
	t.Nodes = append(t.Nodes, n)
	t.index[name] = n
	return n, nil
}

// Connect cables port pa of node a to port pb of node b, both ways.
func (t *Topology) Connect(a string, pa int, b string, pb int) error {
	na, nb := t.index[a], t.index[b]
	if na == nil || nb == nil {
		return fmt.Errorf("connect %s[%d] - %s[%d]: unknown node", a, pa, b, pb)
	}
	if pa < 1 || pa > na.NumPorts || pb < 1 || pb > nb.NumPorts {
		return fmt.Errorf("connect %s[%d] - %s[%d]: port out of range", a, pa, b, pb)
	}
	na.Links[pa] = LinkEnd{Peer: b, Port: pb}
	nb.Links[pb] = LinkEnd{Peer: a, Port: pa}
	return nil
}

// ParseError is a topology file error with its position.
type ParseError struct {
	File string
	Line int
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// LoadTopology reads an ibnetdiscover/ibsim topology file; one over
// readlimit.Topology's bound is refused.
func LoadTopology(path string) (*Topology, error) {
	b, err := readlimit.ReadFile(path, readlimit.Topology)
	if err != nil {
		return nil, fmt.Errorf("topology: %w", err)
	}
	return ParseTopology(path, bytes.NewReader(b))
}

// ParseTopology reads the ibsim/ibnetdiscover format: node headers
// ("Switch N "name" [# "desc" ...]", "Hca N "name"", "Ca", "Rt"), each
// followed by port lines ("[p] "peer"[pp] ..." with optional "(guid)" and
// comments), plus the assignments ibsim accepts (switchguid=, caguid=,
// hcaguids=, rtguid=, vendid=, devid=, sysimgguid=, width=, speed=).
// Links must be described consistently from both ends when both ends list
// them; a link listed at one end only is taken as given.
func ParseTopology(name string, r io.Reader) (*Topology, error) {
	p := &topoParser{t: NewTopology(name), name: name, guidBase: map[ibmad.NodeType]uint64{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		p.lineNo++
		if err := p.line(sc.Text()); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(p.t.Nodes) == 0 {
		return nil, p.errorf("no nodes")
	}
	if err := p.resolveLinks(); err != nil {
		return nil, err
	}
	return p.t, nil
}

// topoParser is ParseTopology's state: the line it is at, the node record
// the port lines belong to, and the assignments so far.
type topoParser struct {
	t        *Topology
	name     string
	lineNo   int
	cur      *NodeSpec                 // the open node record; nil after a blank line
	guidBase map[ibmad.NodeType]uint64 // switchguid=, caguid=, rtguid=: the next node's GUID
	vendID   uint32
	devID    uint16
}

// errorf is a *ParseError at the current line.
func (p *topoParser) errorf(format string, a ...any) error {
	return &ParseError{File: p.name, Line: p.lineNo, Msg: fmt.Sprintf(format, a...)}
}

// line parses one line: a blank line ends a record, a comment is skipped.
func (p *topoParser) line(text string) error {
	trim := strings.TrimSpace(strings.TrimRight(text, "\r"))
	if trim == "" {
		p.cur = nil
		return nil
	}
	switch {
	case strings.HasPrefix(trim, "#"):
		return nil
	case strings.HasPrefix(trim, "[") || strings.HasPrefix(trim, "@["):
		if p.cur == nil {
			return p.errorf("port line outside a node record (a blank line ends a record)")
		}
		return parsePortLine(p.t, p.cur, trim, p.lineNo, p.errorf)
	case hasWord(trim, "Switch"), hasWord(trim, "Hca"), hasWord(trim, "Ca"), hasWord(trim, "Rt"):
		return p.header(trim)
	case strings.Contains(trim, "=") || strings.Contains(trim, "+"):
		return p.assignment(trim)
	}
	return p.errorf("cannot parse %q: want a node header (Switch/Hca/Ca/Rt), a port line [n] \"peer\"[m], or an assignment", trim)
}

// header opens a node record, its GUID the next of the base an
// assignment set (a switch takes one, a CA or router one per port and one
// for the node).
func (p *topoParser) header(trim string) error {
	n, err := parseNodeHeader(p.t, trim, p.lineNo, p.errorf)
	if err != nil {
		return err
	}
	n.VendorID, n.DeviceID = p.vendID, p.devID
	if base, ok := p.guidBase[n.Type]; ok {
		n.GUID = ibmad.GUID(base)
		if n.Type == ibmad.NodeTypeSwitch {
			p.guidBase[n.Type] = base + 1
		} else {
			p.guidBase[n.Type] = base + uint64(n.NumPorts) + 1
		}
	}
	p.cur = n
	return nil
}

// assignment takes one of ibsim's "key=number" lines; it ends a record.
func (p *topoParser) assignment(trim string) error {
	key, val, ok := strings.Cut(trim, "=")
	if !ok {
		return p.errorf("relative assignment %q is not supported", trim)
	}
	key, val = strings.TrimSpace(key), strings.TrimSpace(strings.SplitN(val, "#", 2)[0])
	v, err := strconv.ParseUint(val, 0, 64)
	if err != nil {
		return p.errorf("%s: bad number %q", key, val)
	}
	switch key {
	case "switchguid":
		p.guidBase[ibmad.NodeTypeSwitch] = v
	case "caguid", "hcaguids":
		p.guidBase[ibmad.NodeTypeCA] = v
	case "rtguid":
		p.guidBase[ibmad.NodeTypeRouter] = v
	case "vendid":
		p.vendID = uint32(v) & 0xFFFFFF
	case "devid":
		p.devID = uint16(v)
	case "sysimgguid", "width", "speed", "extspeed":
		// Accepted for compatibility; not modelled.
	default:
		return p.errorf("unknown assignment %q", key)
	}
	p.cur = nil
	return nil
}

// resolveLinks checks every link: the peer exists, and both ends agree;
// a link listed at one end only is added at the other.
func (p *topoParser) resolveLinks() error {
	for _, n := range p.t.Nodes {
		for port := 1; port <= n.NumPorts; port++ {
			if err := p.resolveLink(n, port); err != nil {
				return err
			}
		}
	}
	return nil
}

// resolveLink checks the link at n's port (none: nothing to check).
func (p *topoParser) resolveLink(n *NodeSpec, port int) error {
	l := n.Links[port]
	if l.Peer == "" {
		return nil
	}
	p.lineNo = l.Line
	peer := p.t.index[l.Peer]
	if peer == nil {
		return p.errorf("%s[%d]: peer node %q is not defined", n.Name, port, l.Peer)
	}
	if l.Port < 1 || l.Port > peer.NumPorts {
		return p.errorf("%s[%d]: peer port %q[%d] out of range 1..%d", n.Name, port, l.Peer, l.Port, peer.NumPorts)
	}
	back := peer.Links[l.Port]
	switch {
	case back.Peer == "":
		peer.Links[l.Port] = LinkEnd{Peer: n.Name, Port: port, Line: l.Line}
	case back.Peer != n.Name || back.Port != port:
		return p.errorf("%s[%d] -> %s[%d], but %s[%d] is cabled to %s[%d] (line %d)",
			n.Name, port, l.Peer, l.Port, l.Peer, l.Port, back.Peer, back.Port, back.Line)
	}
	return nil
}

func hasWord(s, w string) bool {
	if !strings.HasPrefix(s, w) {
		return false
	}
	rest := s[len(w):]
	return rest == "" || rest[0] == ' ' || rest[0] == '\t'
}

func parseNodeHeader(t *Topology, s string, line int, perr func(string, ...any) error) (*NodeSpec, error) {
	kind, rest, _ := strings.Cut(s, " ")
	if i := strings.IndexAny(s, " \t"); i > 0 {
		kind, rest = s[:i], s[i+1:]
	}
	var typ ibmad.NodeType
	switch kind {
	case "Switch":
		typ = ibmad.NodeTypeSwitch
	case "Hca", "Ca":
		typ = ibmad.NodeTypeCA
	case "Rt":
		typ = ibmad.NodeTypeRouter
	}
	rest = strings.TrimSpace(rest)
	numStr, rest, _ := strings.Cut(rest, "\"")
	numStr = strings.TrimSpace(numStr)
	nports, err := strconv.Atoi(numStr)
	if err != nil || nports < 1 || nports > 254 {
		return nil, perr("%s header: port count %q is not a number in 1..254", kind, numStr)
	}
	id, rest, ok := strings.Cut(rest, "\"")
	if !ok || id == "" {
		return nil, perr("%s header: missing quoted node name", kind)
	}
	if strings.ContainsAny(id, "#@") {
		return nil, perr("node name %q: '#' and '@' are reserved", id)
	}
	n, err := t.AddNode(typ, id, nports)
	if err != nil {
		return nil, perr("%v", err)
	}
	n.Line = line
	n.Desc = parseDesc(rest)
	if n.Desc == "" {
		n.Desc = id
	}
	return n, nil
}

// parseDesc extracts the node description from the comment of a header,
// as ibsim does: `# "desc" ...` or `# desc lid ...`.
func parseDesc(rest string) string {
	_, c, ok := strings.Cut(rest, "#")
	if !ok {
		return ""
	}
	c = strings.TrimSpace(c)
	if strings.HasPrefix(c, "\"") {
		d, _, _ := strings.Cut(c[1:], "\"")
		return d
	}
	for _, stop := range []string{" enhanced port ", " base port ", " lid ", " lmc "} {
		if i := strings.Index(c, stop); i >= 0 {
			c = c[:i]
		}
	}
	return strings.TrimSpace(c)
}

func parsePortLine(t *Topology, n *NodeSpec, s string, line int, perr func(string, ...any) error) error {
	if strings.HasPrefix(s, "@") {
		return perr("port aliases (@[n]) are not supported")
	}
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return perr("port line: missing ']'")
	}
	p, err := strconv.Atoi(strings.TrimSpace(s[1:end]))
	if err != nil || p < 1 || p > n.NumPorts {
		return perr("node %q: port %q out of range 1..%d", n.Name, s[1:end], n.NumPorts)
	}
	rest := s[end+1:]
	if strings.HasPrefix(rest, "(") { // [1](portguid)
		if i := strings.IndexByte(rest, ')'); i >= 0 {
			rest = rest[i+1:]
		}
	}
	q1 := strings.IndexByte(rest, '"')
	if q1 < 0 {
		return perr("node %q port %d: missing quoted peer name", n.Name, p)
	}
	q2 := strings.IndexByte(rest[q1+1:], '"')
	if q2 < 0 {
		return perr("node %q port %d: unterminated peer name", n.Name, p)
	}
	peer := rest[q1+1 : q1+1+q2]
	if peer == "" {
		return perr("node %q port %d: empty peer name", n.Name, p)
	}
	after := rest[q1+2+q2:]
	pp := 1 // ibsim's default remote port
	if strings.HasPrefix(after, "[") {
		e := strings.IndexByte(after, ']')
		if e < 0 {
			return perr("node %q port %d: peer port: missing ']'", n.Name, p)
		}
		pp, err = strconv.Atoi(strings.TrimSpace(after[1:e]))
		if err != nil || pp < 1 || pp > 254 {
			return perr("node %q port %d: peer port %q is not a number in 1..254", n.Name, p, after[1:e])
		}
	}
	if n.Links[p].Peer != "" {
		return perr("node %q: port %d listed twice (first at line %d)", n.Name, p, n.Links[p].Line)
	}
	n.Links[p] = LinkEnd{Peer: peer, Port: pp, Line: line}
	return nil
}
