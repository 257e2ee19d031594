package plan

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/internal/readlimit"
	"github.com/ibtracer/ibtracer_exporter/linkhealth"
)

// MaxPlanBytes bounds a plan file: 64 MiB holds the ibnetdiscover output
// of a fabric far larger than any built.
const MaxPlanBytes = 64 << 20

// End is one end of a planned link: the node by name and, where the plan
// has it, node GUID (0: none), and its port.
type End struct {
	Node string     `json:"node"`
	GUID ibmad.GUID `json:"-"`
	Port uint8      `json:"port"`
}

// String is the end as ibnetdiscover writes a remote port: "NAME"[PORT].
func (e End) String() string {
	n := e.Node
	if n == "" {
		n = e.GUID.String()
	}
	return fmt.Sprintf("%q[%d]", n, e.Port)
}

// Link is a planned link: its two ends, and the width (lanes, 0: not
// stated) and lane speed (SpeedUnknown: not stated) it is cabled for.
// Line is where the plan states it first.
type Link struct {
	A, B  End
	Width int
	Speed linkhealth.Speed
	Line  int
}

// Plan is a parsed cabling plan.
type Plan struct {
	// File is the name the plan was read under (for messages).
	File string
	// Format is "ibnetdiscover" or "ibdm".
	Format string
	Links  []Link
	byGUID map[portKey]endRef
	byName map[nameKey]endRef
	names  map[string]int // how many distinct nodes carry a name
}

type portKey struct {
	guid ibmad.GUID
	port uint8
}

type nameKey struct {
	name string
	port uint8
}

// endRef is a planned link's end: the link's index, and which end.
type endRef struct {
	link int
	b    bool
}

// ParseError is a malformed plan: the file, the line (1-based) and what
// is wrong there.
type ParseError struct {
	File string
	Line int
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// ParseFile reads the plan at path (Parse): a regular file of at most
// MaxPlanBytes (readlimit.Topology), never a FIFO or a device.
func ParseFile(path string) (*Plan, error) {
	b, err := readlimit.ReadRegularFile(path, readlimit.Topology)
	if err != nil {
		return nil, err
	}
	return Parse(path, bytes.NewReader(b))
}

// Parse reads a plan in either form (the package doc), named file in
// its errors.
func Parse(file string, r io.Reader) (*Plan, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxPlanBytes+1))
	if err != nil {
		return nil, fmt.Errorf("plan %s: %w", file, err)
	}
	if len(b) > MaxPlanBytes {
		return nil, &ParseError{File: file, Line: 1, Msg: fmt.Sprintf("the plan is larger than %d bytes", MaxPlanBytes)}
	}
	lines, err := splitLines(file, b)
	if err != nil {
		return nil, err
	}
	p := &Plan{File: file}
	switch detect(lines) {
	case "ibnetdiscover":
		p.Format = "ibnetdiscover"
		err = parseIBNetDiscover(p, lines)
	case "ibdm":
		p.Format = "ibdm"
		err = parseIBDM(p, lines)
	default:
		return nil, &ParseError{File: file, Line: 1, Msg: "no link in the plan: want ibnetdiscover's output (Switch/Hca blocks of [port] \"remote\"[port] lines) or an ibdm topology file (TYPE NAME, then indented P1 -> TYPE NAME P2 lines)"}
	}
	if err != nil {
		return nil, err
	}
	if len(p.Links) == 0 {
		return nil, &ParseError{File: file, Line: len(lines), Msg: "no link in the plan"}
	}
	p.index()
	return p, nil
}

// splitLines splits b into lines; a NUL byte or invalid UTF-8 is not a
// text plan.
func splitLines(file string, b []byte) ([]string, error) {
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), MaxPlanBytes)
	for sc.Scan() {
		l := strings.TrimSuffix(sc.Text(), "\r")
		if strings.IndexByte(l, 0) >= 0 || !utf8.ValidString(l) {
			return nil, &ParseError{File: file, Line: len(lines) + 1, Msg: "not text (a NUL byte or invalid UTF-8)"}
		}
		lines = append(lines, l)
	}
	if err := sc.Err(); err != nil {
		return nil, &ParseError{File: file, Line: len(lines) + 1, Msg: err.Error()}
	}
	return lines, nil
}

// detect names the form of the first significant line: ibnetdiscover's
// keywords and headers, else an ibdm system line.
func detect(lines []string) string {
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || t[0] == '#' {
			continue
		}
		f := strings.Fields(t)[0]
		switch {
		case f == "Switch" || f == "Hca" || f == "Ca" || f == "Rt" || strings.HasPrefix(t, "["):
			return "ibnetdiscover"
		case strings.Contains(f, "="):
			return "ibnetdiscover" // vendid=, devid=, sysimgguid=, switchguid=, caguid=
		default:
			return "ibdm"
		}
	}
	return ""
}

// index builds the lookups of the plan's ends, by GUID and port and by
// name and port.
func (p *Plan) index() {
	p.byGUID, p.byName, p.names = map[portKey]endRef{}, map[nameKey]endRef{}, map[string]int{}
	nodes := map[string]map[ibmad.GUID]bool{}
	for i, l := range p.Links {
		for _, e := range []struct {
			end End
			b   bool
		}{{l.A, false}, {l.B, true}} {
			ref := endRef{link: i, b: e.b}
			if e.end.GUID != 0 {
				p.byGUID[portKey{e.end.GUID, e.end.Port}] = ref
			}
			if e.end.Node != "" {
				p.byName[nameKey{e.end.Node, e.end.Port}] = ref
				if nodes[e.end.Node] == nil {
					nodes[e.end.Node] = map[ibmad.GUID]bool{}
				}
				nodes[e.end.Node][e.end.GUID] = true
			}
		}
	}
	for n, gs := range nodes {
		p.names[n] = len(gs)
	}
}

// end returns the planned end ref names, and its far end.
func (p *Plan) end(r endRef) (near, far End, l *Link) {
	l = &p.Links[r.link]
	if r.b {
		return l.B, l.A, l
	}
	return l.A, l.B, l
}
