package trace

import (
	"context"
	"fmt"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// lftPath follows the sim's forwarding tables (its own state, not the
// walk's reading of it) from node src to dlid: the node names and ports
// in order, as the signature "in>name>out;" per hop.
func lftPath(t *testing.T, f *sim.Fabric, src string, dlid uint16) string {
	t.Helper()
	n := f.Node(src)
	var in uint8
	s := ""
	out := uint8(0)
	if !n.IsSwitch() {
		out = 1
		for _, p := range n.Ports[1:] {
			if p.Remote != nil {
				out = p.Num
				break
			}
		}
	}
	for hop := 0; hop < 64; hop++ {
		if n.IsSwitch() {
			if n.Ports[0].LID == dlid {
				return s + fmt.Sprintf("%d>%s>0;", in, n.Name)
			}
			out = f.LFT(n.Name)[dlid]
		} else if hop > 0 {
			p := n.Ports[in]
			if p.LID != 0 && dlid >= p.LID && dlid < p.LID+1<<p.LMC {
				return s + fmt.Sprintf("%d>%s>0;", in, n.Name)
			}
			t.Fatalf("the LFT route to %d ends at CA %s", dlid, n.Name)
		}
		s += fmt.Sprintf("%d>%s>%d;", in, n.Name, out)
		r := n.Ports[out].Remote
		n, in = r.Node, r.Num
	}
	t.Fatalf("the LFT route to %d loops", dlid)
	return ""
}

func namedSignature(f *sim.Fabric, r *Result) string {
	s := ""
	for _, h := range r.Hops {
		s += fmt.Sprintf("%d>%s>%d;", h.InPort, f.NodeByGUID(h.NodeGUID).Name, h.OutPort)
	}
	return s
}

// TestTraceAllFollowsEveryLIDOfTheRange: with LMC 2 every CA port owns
// four LIDs; TraceAll traces each, every path equals the sim's forwarding
// tables for that LID, the minhop routing spreads them over more than
// one path, and the shared hops are on every path.
func TestTraceAllFollowsEveryLIDOfTheRange(t *testing.T) {
	for _, src := range []string{"H0-0", "H1-2"} {
		s := loadSim(t, "fattree-mini.net", sim.Options{LMC: 2})
		s.agentsEverywhere()
		tr := s.tracer(src, Options{})
		compared, multi := 0, 0
		for _, n := range s.f.Nodes() {
			if n.IsSwitch() || n.Name == src {
				continue
			}
			base := n.Ports[1].LID
			// Ask by the third LID of the range: the set still starts at the base.
			ps := tr.TraceAll(context.Background(), Destination{LID: base + 2})
			if ps.BaseLID != base || ps.LMC != 2 || len(ps.Paths) != 4 {
				t.Fatalf("%s: base %d LMC %d, %d paths; want %d, 2, 4", n.Name, ps.BaseLID, ps.LMC, len(ps.Paths), base)
			}
			sigs := map[string]bool{}
			for i, r := range ps.Paths {
				if r.Status != StatusOK || r.DLID != base+uint16(i) || ps.Offset(i) != i {
					t.Fatalf("%s +%d: %s %v (DLID %d)", n.Name, i, r.Status, r.Err, r.DLID)
				}
				// The destination's agent answers from its base LID whichever
				// LID was asked: the engine takes it under the LMC the walk
				// read, and the SMA is not asked in the agent's stead.
				if d := r.Hops[len(r.Hops)-1]; d.Agent != AgentValidated || d.ValidatedBy != ByAgent {
					t.Fatalf("%s LID %d: the destination's hop is %s by %q, not validated by its agent", n.Name, r.DLID, d.Agent, d.ValidatedBy)
				}
				want := lftPath(t, s.f, src, r.DLID)
				if got := namedSignature(s.f, r); got != want {
					t.Fatalf("%s LID %d: path %s, the LFTs say %s", n.Name, r.DLID, got, want)
				}
				sigs[want] = true
				compared++
				for _, sh := range ps.Shared {
					found := false
					for _, h := range r.Hops {
						found = found || h.NodeGUID == sh.NodeGUID
					}
					if !found {
						t.Fatalf("%s: shared hop %s is not on path +%d", n.Name, sh.NodeDesc, i)
					}
				}
			}
			if ps.Distinct != len(sigs) {
				t.Fatalf("%s: %d distinct, the LFTs give %d", n.Name, ps.Distinct, len(sigs))
			}
			if ps.Distinct > 1 {
				multi++
			}
			// The destination itself is on every path.
			if len(ps.Shared) == 0 || ps.Shared[len(ps.Shared)-1].NodeGUID != n.GUID {
				t.Fatalf("%s: shared hops %v do not end at the destination", n.Name, ps.Shared)
			}
		}
		if multi == 0 {
			t.Fatalf("from %s: no destination has more than one path with LMC 2", src)
		}
		t.Logf("from %s: %d LID paths equal the LFTs, %d destinations with several paths", src, compared, multi)
	}
}

// TestTraceAllWithoutReachIsOnePath: a destination the first trace does
// not reach yields a one-path set carrying the failure; LMC 0 a one-path
// set of the base LID.
func TestTraceAllWithoutReachIsOnePath(t *testing.T) {
	s := loadSim(t, "fattree-mini.net", sim.Options{})
	tr := s.tracer("H0-0", Options{Validate: ValidateOff})
	ps := tr.TraceAll(context.Background(), Destination{LID: 900})
	if len(ps.Paths) != 1 || ps.Paths[0].Status != StatusUnreachable || ps.Distinct != 0 || ps.Worst() != ps.Paths[0] {
		t.Fatalf("unreachable: %d paths, %s, %d distinct", len(ps.Paths), ps.Paths[0].Status, ps.Distinct)
	}
	lid := s.lid("H1-1")
	ps = tr.TraceAll(context.Background(), Destination{LID: lid})
	if len(ps.Paths) != 1 || ps.LMC != 0 || ps.BaseLID != lid || ps.Distinct != 1 || ps.Worst().Status != StatusOK {
		t.Fatalf("LMC 0: %d paths, LMC %d base %d, %d distinct", len(ps.Paths), ps.LMC, ps.BaseLID, ps.Distinct)
	}
}
