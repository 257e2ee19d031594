package plan

import (
	"bufio"
	"fmt"
	"io"
	"sort"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// WriteIBNetDiscover writes links as ibnetdiscover's output: a block per
// node, in GUID order, with its switchguid= or caguid= line, its header
// under its GUID id (S-, H-, R-) with its name in the comment, and a line
// per port found cabled, the remote's name, width and speed in the
// comment ("4xQDR"). A header's port count is the highest port found.
// Parse reads it back, and ibnetdiscover --diff's reading of a cache
// aside, the form is the one `ibnetdiscover` prints (docs/cli.md,
// "--plan").
func WriteIBNetDiscover(w io.Writer, links []Found) error {
	type port struct {
		far  FoundEnd
		rate string
	}
	type node struct {
		end   FoundEnd
		ports map[uint8]port
	}
	nodes := map[ibmad.GUID]*node{}
	add := func(near, far FoundEnd, rate string) {
		n := nodes[near.GUID]
		if n == nil {
			n = &node{end: near, ports: map[uint8]port{}}
			nodes[near.GUID] = n
		}
		n.ports[near.Port] = port{far: far, rate: rate}
	}
	for _, l := range links {
		rate := ""
		if l.Width != 0 && l.Speed != 0 {
			rate = fmt.Sprintf(" %dx%s", l.Width, l.Speed)
		}
		add(l.A, l.B, rate)
		add(l.B, l.A, rate)
	}
	guids := make([]ibmad.GUID, 0, len(nodes))
	for g := range nodes {
		guids = append(guids, g)
	}
	sort.Slice(guids, func(i, j int) bool { return guids[i] < guids[j] })
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# Cabling plan as the traces saw it (ibtracer --plan FILE --write): %d links.\n", len(links))
	for _, g := range guids {
		n := nodes[g]
		ps := make([]int, 0, len(n.ports))
		for p := range n.ports {
			ps = append(ps, int(p))
		}
		sort.Ints(ps)
		kind, key := ndKind(n.end.Type)
		fmt.Fprintf(bw, "\n%s=%#x\n%s\t%d %q\t\t# %q\n", key, uint64(g), kind, ps[len(ps)-1], ndID(n.end), n.end.Label())
		for _, p := range ps {
			pp := n.ports[uint8(p)]
			fmt.Fprintf(bw, "[%d]\t%q[%d]\t\t# %q%s\n", p, ndID(pp.far), pp.far.Port, pp.far.Label(), pp.rate)
		}
	}
	return bw.Flush()
}

func ndKind(t ibmad.NodeType) (header, guidKey string) {
	switch t {
	case ibmad.NodeTypeSwitch:
		return "Switch", "switchguid"
	case ibmad.NodeTypeRouter:
		return "Rt", "rtrguid"
	}
	return "Ca", "caguid"
}

// ndID is ibnetdiscover's id of a node: S-, H- or R- and its GUID.
func ndID(e FoundEnd) string {
	p := "H"
	switch e.Type {
	case ibmad.NodeTypeSwitch:
		p = "S"
	case ibmad.NodeTypeRouter:
		p = "R"
	}
	return fmt.Sprintf("%s-%016x", p, uint64(e.GUID))
}
