package plan

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/ibtracer/ibtracer_exporter/linkhealth"
)

// The ibdm topology file (ibdm-topo-file(1); docs/runbook.md, "The
// fabric as planned"): a system's line, `SYSTEM-TYPE SYSTEM-NAME [CFG:
// ...]`, at the start of a line; then, indented, one line per cabled
// port until the next blank line: `LOCAL-PORT -> REM-TYPE REM-NAME
// REM-PORT`, or with the width and lane speed the link is cabled for,
// `P1 -4x-10G-> MT23108 H-1 P1` as ibdiagnet -wt writes it. The port
// panel names read here are a single-node system's, P1 or 1; a
// multi-board system's (L3/P1) would need its IBNL definition.
var (
	ibdmPort  = regexp.MustCompile(`^(\S+)\s+-(?:([0-9]+)[xX]-([0-9.]+)G-)?>\s+(\S+)\s+(\S+)\s+(\S+)$`)
	ibdmPanel = regexp.MustCompile(`^[Pp]?([0-9]+)$`)
)

// parseIBDM reads an ibdm topology file.
func parseIBDM(p *Plan, lines []string) error {
	var (
		sys     string
		systems = map[string]int{}
		halves  []half
	)
	bad := func(i int, format string, a ...any) error {
		return &ParseError{File: p.File, Line: i + 1, Msg: fmt.Sprintf(format, a...)}
	}
	for i, raw := range lines {
		l := strings.TrimSpace(raw)
		switch {
		case l == "":
			sys = ""
		case l[0] == '#':
		case raw[0] != ' ' && raw[0] != '\t':
			f := strings.Fields(l)
			if len(f) < 2 {
				return bad(i, "a system line needs SYSTEM-TYPE SYSTEM-NAME, such as MTS2400 S-1")
			}
			if len(f) > 2 && !strings.HasPrefix(f[2], "CFG:") {
				return bad(i, "%q after the system name: want CFG: or nothing", f[2])
			}
			if j, dup := systems[f[1]]; dup {
				return bad(i, "system %q has a second section (first at line %d)", f[1], j)
			}
			sys, systems[f[1]] = f[1], i+1
		default:
			if sys == "" {
				return bad(i, "a port line outside any system section (a system line, TYPE NAME, must come first)")
			}
			h, err := ibdmParsePort(sys, l)
			if err != nil {
				return bad(i, "%v", err)
			}
			h.line = i + 1
			halves = append(halves, h)
		}
	}
	return assemble(p, halves)
}

func ibdmParsePort(sys, l string) (h half, err error) {
	m := ibdmPort.FindStringSubmatch(l)
	if m == nil {
		return h, fmt.Errorf("not a port line: want LOCAL-PORT -> REM-TYPE REM-NAME REM-PORT, such as P1 -4x-10G-> MT23108 H-1 P1")
	}
	port, err := ibdmPanelPort(m[1])
	if err != nil {
		return h, err
	}
	rport, err := ibdmPanelPort(m[6])
	if err != nil {
		return h, err
	}
	h = half{nearID: sys, farID: m[5], near: End{Node: sys, Port: port}, far: End{Node: m[5], Port: rport}}
	if m[2] != "" {
		if h.width, err = linkhealth.ParseWidth(m[2]); err != nil {
			return h, err
		}
		if h.speed, err = linkhealth.ParseSpeed(m[3]); err != nil {
			return h, err
		}
	}
	return h, nil
}

func ibdmPanelPort(s string) (uint8, error) {
	m := ibdmPanel.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("port %q: only a single-node system's ports, P1 .. P254, are read (a multi-board system's L3/P1 needs its IBNL definition)", s)
	}
	v, err := strconv.Atoi(m[1])
	if err != nil || v < 1 || v > 254 {
		return 0, fmt.Errorf("port %q is not a port 1..254", s)
	}
	return uint8(v), nil
}
