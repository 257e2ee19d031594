package plan

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/linkhealth"
)

// ibnetdiscover's lines (docs/runbook.md, "The fabric as planned"): a
// node's header, `Switch 7 "S-0000000000200003"  # "L1" base port 0 lid 6
// lmc 0` (Hca or Ca for a CA, Rt for a router; ibsim's files write the
// name itself, `Switch 7 "L1"`); its port lines, `[4]
// "S-0000000000200000"[3]  # "S0" lid 2 4xSDR`, a CA's with its port
// GUID after its port, `[1](100007)`, and ibsim's files with port options
// after the remote port (w=1); the GUID lines before a header
// (switchguid=0x200003(200003), caguid=0x10000a) and the vendid=,
// devid=, sysimgguid= lines, which a plan does not need.
var (
	ndHeader = regexp.MustCompile(`^(Switch|Hca|Ca|Rt)\s+(\d+)\s+"([^"]*)"([^#]*)(#.*)?$`)
	ndPort   = regexp.MustCompile(`^\[(\d+)\](\([0-9a-fA-F]+\))?\s*"([^"]*)"\[(\d+)\](\([0-9a-fA-F]+\))?\s*([^#]*?)\s*(#.*)?$`)
	ndKey    = regexp.MustCompile(`^([a-z]+)=(\S*)$`)
	ndGUIDID = regexp.MustCompile(`^[SHR]-([0-9a-fA-F]{16})$`)
	ndWidth  = regexp.MustCompile(`\b(1|2|4|8|12)x([A-Z]{3}[0-9]*)\b`)
	ndQuoted = regexp.MustCompile(`"([^"]*)"`)
	ndOption = regexp.MustCompile(`^([a-z]+)=(\d+)$`)
)

// ndNode is a node block's header.
type ndNode struct {
	id, desc string
	guid     ibmad.GUID
	ports    int
}

// name is the node's name: its description (the header's comment), else
// its id unless that is only its GUID.
func (n *ndNode) name() string {
	if n.desc != "" {
		return n.desc
	}
	if ndGUIDID.MatchString(n.id) {
		return ""
	}
	return n.id
}

// parseIBNetDiscover reads ibnetdiscover's form.
func parseIBNetDiscover(p *Plan, lines []string) error {
	var (
		cur     *ndNode
		pending ibmad.GUID // switchguid= or caguid= before the next header
		nodes   = map[string]*ndNode{}
		halves  []half
		descs   = map[string]string{} // a remote's description, from a port line's comment
	)
	bad := func(i int, format string, a ...any) error {
		return &ParseError{File: p.File, Line: i + 1, Msg: fmt.Sprintf(format, a...)}
	}
	for i, raw := range lines {
		l := strings.TrimSpace(raw)
		switch {
		case l == "" || l[0] == '#':
			if l == "" {
				cur = nil // a blank line ends a block in ibsim's files too
			}
		case ndKey.MatchString(l):
			m := ndKey.FindStringSubmatch(l)
			if m[1] == "switchguid" || m[1] == "caguid" || m[1] == "rtrguid" {
				v := m[2]
				if j := strings.IndexByte(v, '('); j >= 0 {
					v = v[:j]
				}
				g, err := ibmad.ParseGUID(v)
				if err != nil {
					return bad(i, "%s: %q is not a GUID", m[1], m[2])
				}
				pending = g
			}
		case ndHeader.MatchString(l):
			n, err := ndParseHeader(l, pending)
			if err != nil {
				return bad(i, "%v", err)
			}
			pending = 0
			if o, dup := nodes[n.id]; dup {
				_ = o
				return bad(i, "node %q has a second block", n.id)
			}
			nodes[n.id], cur = n, n
		case strings.HasPrefix(l, "["):
			if cur == nil {
				return bad(i, "a port line outside any Switch, Hca or Rt block")
			}
			h, desc, err := ndParsePort(cur, l)
			if err != nil {
				return bad(i, "%v", err)
			}
			h.line = i + 1
			if desc != "" {
				descs[h.farID] = desc
			}
			halves = append(halves, h)
		default:
			return bad(i, "not a line of ibnetdiscover's output: want a Switch, Hca or Rt header, a [port] \"remote\"[port] line, a key=value line or a # comment")
		}
	}
	for i := range halves {
		h := &halves[i]
		n := nodes[h.nearID]
		h.near.Node, h.near.GUID = n.name(), n.guid
		h.far.Node, h.far.GUID = ndRemote(h.farID, nodes, descs)
	}
	return assemble(p, halves)
}

func ndParseHeader(l string, pending ibmad.GUID) (*ndNode, error) {
	m := ndHeader.FindStringSubmatch(l)
	ports, err := strconv.Atoi(m[2])
	if err != nil || ports < 1 || ports > 254 {
		return nil, fmt.Errorf("%s %q: %q is not a port count 1..254", m[1], m[3], m[2])
	}
	if m[3] == "" {
		return nil, fmt.Errorf("%s with an empty name", m[1])
	}
	n := &ndNode{id: m[3], guid: pending, ports: ports}
	if g := ndGUIDID.FindStringSubmatch(m[3]); g != nil {
		v, _ := strconv.ParseUint(g[1], 16, 64)
		n.guid = ibmad.GUID(v)
	}
	if q := ndQuoted.FindStringSubmatch(m[5]); q != nil {
		n.desc = q[1]
	}
	return n, nil
}

// ndParsePort reads a port line of node n; desc is the remote's
// description when the comment gives it.
func ndParsePort(n *ndNode, l string) (h half, desc string, err error) {
	m := ndPort.FindStringSubmatch(l)
	if m == nil {
		return h, "", fmt.Errorf("not a port line: want [PORT] \"REMOTE\"[PORT], such as [4] \"S0\"[1]")
	}
	port, err := ndPortNum(m[1])
	if err != nil {
		return h, "", err
	}
	if int(port) > n.ports {
		return h, "", fmt.Errorf("port %d of %q: its header declares %d ports", port, n.id, n.ports)
	}
	rport, err := ndPortNum(m[4])
	if err != nil {
		return h, "", fmt.Errorf("remote %v", err)
	}
	if m[3] == "" {
		return h, "", fmt.Errorf("port %d: the remote node's name is empty", port)
	}
	h = half{nearID: n.id, farID: m[3], near: End{Port: port}, far: End{Port: rport}}
	if m[6] != "" {
		if h.width, err = ndOptions(m[6]); err != nil {
			return h, "", err
		}
	}
	if c := m[7]; c != "" {
		if q := ndQuoted.FindStringSubmatch(c); q != nil {
			desc = q[1]
		}
		if w := ndWidth.FindStringSubmatch(c); w != nil {
			h.width, _ = strconv.Atoi(w[1])
			h.speed, _ = linkhealth.ParseSpeed(w[2]) // FDR10 and the like: not stated
		}
	}
	return h, desc, nil
}

func ndPortNum(s string) (uint8, error) {
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 || v > 254 {
		return 0, fmt.Errorf("port %q is not a port number 1..254", s)
	}
	return uint8(v), nil
}

// ndOptions reads ibsim's port options after the remote port: w=MASK,
// the widths the port enables (1: 1X, 2: 4X, 4: 8X, 8: 12X; the widest
// is the planned width), and s=, e= (speeds), which a plan does not use.
func ndOptions(s string) (width int, err error) {
	for _, f := range strings.Fields(s) {
		m := ndOption.FindStringSubmatch(f)
		if m == nil {
			return 0, fmt.Errorf("%q after the remote port: want a # comment or ibsim's port options (w=1)", f)
		}
		if m[1] == "w" {
			v, _ := strconv.Atoi(m[2])
			for _, b := range [...]struct{ bit, lanes int }{{8, 12}, {4, 8}, {2, 4}, {1, 1}} {
				if v&b.bit != 0 {
					width = b.lanes
					break
				}
			}
		}
	}
	return width, nil
}

// ndRemote names a port line's remote: from its own block, else the
// description the comment gave, else its id; its GUID from a GUID id.
func ndRemote(id string, nodes map[string]*ndNode, descs map[string]string) (string, ibmad.GUID) {
	if n, ok := nodes[id]; ok {
		if n.name() != "" || descs[id] == "" {
			return n.name(), n.guid
		}
		return descs[id], n.guid
	}
	var g ibmad.GUID
	if m := ndGUIDID.FindStringSubmatch(id); m != nil {
		v, _ := strconv.ParseUint(m[1], 16, 64)
		g = ibmad.GUID(v)
		return descs[id], g
	}
	if d := descs[id]; d != "" {
		return d, 0
	}
	return id, 0
}
