package trace

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// A person names a node by its site name (a node-name-map's), by its node
// description, or by its node GUID; the pages, the logs and the command
// write a node the same way, name first and GUID after (NodeLabel), and
// the filters (ibtracer --via, /traces?link= and ?destination=) read any
// of the three (docs/runbook.md, "Naming nodes").

// NodeLabel is a node for a person: its site name, else its node
// description, then its GUID in braces: `L1 {0x0000000000200001}`. A name
// that holds anything but letters, digits and ._-/@+ is quoted (%q), so
// that a label stays one token however the fabric spells it; a node
// without name or description is its GUID alone.
func NodeLabel(name, desc string, guid ibmad.GUID) string {
	n := name
	if n == "" {
		n = desc
	}
	if n == "" {
		return "{" + guid.String() + "}"
	}
	return quoteName(n) + " {" + guid.String() + "}"
}

// Label is the hop's node for a person (NodeLabel).
func (h *Hop) Label() string { return NodeLabel(h.NodeName, h.NodeDesc, h.NodeGUID) }

// quoteName is n as is when every byte is a letter, digit or one of
// ._-/@+, else quoted.
func quoteName(n string) string {
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._-/@+", c) >= 0) {
			return fmt.Sprintf("%q", n)
		}
	}
	return n
}

// NamedNode is a node a name can stand for: its node GUID, its site name
// (none without a node-name-map) and its node description.
type NamedNode struct {
	GUID       ibmad.GUID
	Name, Desc string
}

// Label is the node for a person (NodeLabel).
func (n NamedNode) Label() string { return NodeLabel(n.Name, n.Desc, n.GUID) }

// Nodes are the nodes names are looked up among: those of a
// node-name-map and those seen on traced paths. The zero value is empty
// and ready; it is not safe for concurrent use.
type Nodes struct {
	byGUID map[ibmad.GUID]*NamedNode
}

// Add records a node: its site name and description fill in what an
// earlier Add of the same GUID left empty.
func (ns *Nodes) Add(guid ibmad.GUID, name, desc string) {
	if guid == 0 {
		return
	}
	if ns.byGUID == nil {
		ns.byGUID = map[ibmad.GUID]*NamedNode{}
	}
	n := ns.byGUID[guid]
	if n == nil {
		n = &NamedNode{GUID: guid}
		ns.byGUID[guid] = n
	}
	if n.Name == "" {
		n.Name = name
	}
	if n.Desc == "" {
		n.Desc = desc
	}
}

// AddMap records every node of a node-name-map (GUID to site name).
func (ns *Nodes) AddMap(m map[uint64]string) {
	for g, n := range m {
		ns.Add(ibmad.GUID(g), n, "")
	}
}

// AddHops records the nodes of every hop of rs (nil results skipped).
func (ns *Nodes) AddHops(rs ...*Result) {
	for _, r := range rs {
		if r == nil {
			continue
		}
		for i := range r.Hops {
			h := &r.Hops[i]
			ns.Add(h.NodeGUID, h.NodeName, h.NodeDesc)
		}
	}
}

// Named returns the nodes whose site name or node description is name
// (exactly), ordered by GUID.
func (ns *Nodes) Named(name string) []NamedNode {
	var out []NamedNode
	for _, n := range ns.byGUID {
		if name != "" && (n.Name == name || n.Desc == name) {
			out = append(out, *n)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GUID < out[j].GUID })
	return out
}

// Node returns the node of GUID g as recorded (ok false: none).
func (ns *Nodes) Node(g ibmad.GUID) (NamedNode, bool) {
	if n := ns.byGUID[g]; n != nil {
		return *n, true
	}
	return NamedNode{}, false
}

// maxListed bounds the nodes an ambiguous name's error lists, and
// maxEchoed the bytes of a name it echoes: the error goes back to
// whoever wrote the name (a page, a terminal).
const (
	maxListed = 10
	maxEchoed = 64
)

// AmbiguousError is a name that several nodes have: it lists them (at
// most maxListed, then how many more) so that the user can pick one by
// its GUID.
type AmbiguousError struct {
	Name  string
	Nodes []NamedNode
}

func (e *AmbiguousError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the name %q matches %d nodes: ", echo(e.Name), len(e.Nodes))
	for i, n := range e.Nodes {
		if i == maxListed {
			fmt.Fprintf(&b, ", and %d more", len(e.Nodes)-maxListed)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(n.Label())
	}
	b.WriteString("; give one by its node GUID")
	return b.String()
}

// UnknownNameError is a name no node has among those looked at.
type UnknownNameError struct{ Name string }

func (e *UnknownNameError) Error() string {
	s := fmt.Sprintf("no node is named %q (a node-name-map name or a node description, on a traced path)", echo(e.Name))
	if _, ok := ParseNodeGUID("0x" + e.Name); ok {
		s += "; a node GUID is written with 0x"
	}
	return s
}

// echo is at most maxEchoed bytes of s, cut on a rune boundary, with "…"
// when cut.
func echo(s string) string {
	if len(s) <= maxEchoed {
		return s
	}
	cut := maxEchoed
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xc0 != 0x80 }

// Lookup resolves a node written as text: a node GUID (0x and 1..16 hex
// digits) is that node, whether recorded or not; anything else is a name,
// the one node whose site name or description it is. A name no node has
// is an *UnknownNameError; one several nodes have, an *AmbiguousError.
func (ns *Nodes) Lookup(s string) (ibmad.GUID, error) {
	if g, ok := ParseNodeGUID(s); ok {
		return g, nil
	}
	switch m := ns.Named(s); len(m) {
	case 0:
		return 0, &UnknownNameError{Name: s}
	case 1:
		return m[0].GUID, nil
	default:
		return 0, &AmbiguousError{Name: s, Nodes: m}
	}
}

// ParseNodeGUID reads a node GUID as the reports write it: 0x and 1..16
// hex digits, not all zero (ok false: not one).
func ParseNodeGUID(s string) (ibmad.GUID, bool) {
	digits, hex := strings.CutPrefix(strings.ToLower(s), "0x")
	if !hex || digits == "" || len(digits) > 16 {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uint64(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uint64(c-'a'+10)
		default:
			return 0, false
		}
	}
	return ibmad.GUID(v), v != 0
}
