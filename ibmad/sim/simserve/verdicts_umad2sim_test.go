package simserve_test

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/internal/ibopen"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// ibtracertLine is one hop of stock ibtracert's output: the previous
// node's out port, this node's port GUID and in port.
var ibtracertLine = regexp.MustCompile(`^\[(\d+)\] -> (?:switch|ca) port \{(0x[0-9a-f]+)\}\[(\d+)\] lid \d+-\d+ "[^"]*"$`)

// stockLink is one link of a route as stock ibtracert prints it: the
// node it leaves (by the port GUID ibtracert names it by), its out port,
// the node it enters and its in port.
type stockLink struct {
	from    uint64
	out     uint8
	to      uint64
	in      uint8
	present bool
}

func (l stockLink) String() string {
	return fmt.Sprintf("%#x port %d -> %#x port %d", l.from, l.out, l.to, l.in)
}

// stockRoute runs stock `ibtracert SRC DST` and returns its links, by the
// port GUID of the node each enters (a switch's is its port 0's).
func stockRoute(t *testing.T, run func(args ...string) string, src, dst uint16, srcGUID uint64) map[uint64]stockLink {
	t.Helper()
	out := run(strconv.Itoa(int(src)), strconv.Itoa(int(dst)))
	links := map[uint64]stockLink{}
	prev := srcGUID
	for _, l := range strings.Split(out, "\n") {
		m := ibtracertLine.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		o, _ := strconv.Atoi(m[1])
		g, _ := strconv.ParseUint(m[2], 0, 64)
		in, _ := strconv.Atoi(m[3])
		links[g] = stockLink{from: prev, out: uint8(o), to: g, in: uint8(in), present: true}
		prev = g
	}
	if len(links) == 0 {
		t.Fatalf("ibtracert %d %d printed no hop:\n%s", src, dst, out)
	}
	return links
}

// TestVerdictsAgainstStockIbtracert: on fabrics with parallel cables
// between switches, served to stock ibtracert through libumad2sim, the
// independent router: for every hop our tracer reports validated, the
// route stock `ibtracert SRC HOP_LID` gives enters that hop over the link
// the route of `ibtracert SRC DLID` enters it by (same previous node, out
// port and in port); every hop whose own LID's route enters by another
// link is validated_other_link, never validated. The SMAs validate (no
// agent anywhere: the in-process switches answer a LID-routed SMP with
// the port it arrived by, as real switches do).
func TestVerdictsAgainstStockIbtracert(t *testing.T) {
	if testing.Short() {
		t.Skip("runs stock ibtracert")
	}
	lib := requireDiags(t)
	for _, topo := range []string{"fattree-mini.net", "two-switch.net"} {
		t.Run(topo, func(t *testing.T) {
			o := openFabric(t, ibopen.Config{SimTopology: filepath.Join(topoDir, topo), SimAgents: "none"})
			f := o.Fabric
			s := serve(t, f, o.Node)
			self := f.Node(o.Node)
			selfLID, _ := f.LIDOf(o.Node, 0)
			srcGUID := uint64(self.Ports[1].GUID)
			routes := map[uint16]map[uint64]stockLink{}
			route := func(dst uint16) map[uint64]stockLink {
				if r, ok := routes[dst]; ok {
					return r
				}
				r := stockRoute(t, func(args ...string) string { return diag(t, lib, s, "", nil, "ibtracert", args...) }, selfLID, dst, srcGUID)
				routes[dst] = r
				return r
			}
			tr := trace.New(engine(t, dial(t, s, "", false)), trace.Options{Validate: trace.ValidateSMA})
			counts := map[trace.AgentStatus]int{}
			for _, lid := range f.CALIDs() {
				if lid == selfLID {
					continue
				}
				r := tr.Trace(context.Background(), trace.Destination{LID: lid})
				if r.Status != trace.StatusOK {
					t.Fatalf("our trace to %d: %s %v", lid, r.Status, r.Err)
				}
				path := route(lid)
				for _, h := range r.Hops[1:] {
					g := uint64(h.PortGUID)
					traced, ok := path[g]
					if !ok {
						t.Fatalf("LID %d: hop %d %s (%#x) is not on ibtracert's route %v", lid, h.Hop, h.NodeDesc, g, path)
					}
					target := h.LID
					if h.Hop == r.PathHops() {
						target = lid
					}
					own := route(target)[g]
					same := own == traced
					counts[h.Agent]++
					switch h.Agent {
					case trace.AgentValidated:
						if !same {
							t.Errorf("LID %d hop %d %s validated, but ibtracert %d %d enters it over %s, the path (ibtracert %d %d) over %s",
								lid, h.Hop, h.NodeDesc, selfLID, target, own, selfLID, lid, traced)
						}
					case "validated_other_link":
						if same {
							t.Errorf("LID %d hop %d %s validated_other_link, but its own LID's route enters over the traced link %s", lid, h.Hop, h.NodeDesc, traced)
						}
					default:
						t.Errorf("LID %d hop %d %s: %s, want validated or validated_other_link", lid, h.Hop, h.NodeDesc, h.Agent)
					}
				}
			}
			if counts[trace.AgentValidated] == 0 || counts["validated_other_link"] == 0 {
				t.Fatalf("verdicts %v: want both kinds on a fabric with parallel cables", counts)
			}
			t.Logf("%s: %v; %d stock ibtracert routes", topo, counts, len(routes))
		})
	}
}
