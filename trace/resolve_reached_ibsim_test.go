package trace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/agent"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
)

var (
	ndCARe   = regexp.MustCompile(`^Ca\s+\d+\s+"[^"]*"\s+#\s+"(.*)"`)
	ndPortRe = regexp.MustCompile(`^\[(\d+)\]\(([0-9a-f]+)\)\s.*#\s+lid (\d+) lmc (\d+) `)
)

// caPort is a CA port as stock ibnetdiscover shows it.
type caPort struct {
	guid ibmad.GUID
	lid  uint16
	lmc  uint8
}

func (p caPort) owns(lid uint16) bool { return lid >= p.lid && lid < p.lid+1<<p.lmc }

// discoverCAs runs ibnetdiscover at node: port 1 of every CA, by description.
func discoverCAs(t *testing.T, fab *ibsimtest.Fabric, node string) map[string]caPort {
	t.Helper()
	out, err := fab.Tool(node, "ibnetdiscover")
	if err != nil {
		t.Fatal(err)
	}
	cas, ca := map[string]caPort{}, ""
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if m := ndCARe.FindStringSubmatch(line); m != nil {
			ca = m[1]
			continue
		}
		if m := ndPortRe.FindStringSubmatch(line); m != nil && ca != "" && m[1] == "1" {
			g, _ := strconv.ParseUint(m[2], 16, 64)
			lid, _ := strconv.Atoi(m[3])
			lmc, _ := strconv.Atoi(m[4])
			cas[ca] = caPort{guid: ibmad.GUID(g), lid: uint16(lid), lmc: uint8(lmc)}
		}
		if line == "" {
			ca = ""
		}
	}
	return cas
}

// ownerOf is the CA whose port owns lid ("" when none).
func ownerOf(cas map[string]caPort, lid uint16) string {
	for name, p := range cas {
		if p.owns(lid) {
			return name
		}
	}
	return ""
}

// TestMovedLIDsOnIbsim reproduces issue 24's LID move on ibsim with
// OpenSM (on its own host, off every traced path: docs/architecture.md,
// "Testing against independent sources"). Destinations named by node,
// port GUID and GID resolve (resolve_ttl 1 h on a clock that does not
// move) and are confirmed by the fast path, from two sources; then
// OpenSM is killed, its guid2lid cache deleted, and it comes back with
// LMC 2: ports get other, aligned LIDs. H0-0's LID moves (logged once);
// H0-2 keeps LID 8, whose range 8-11 now holds what were H1-1's and
// H1-2's LIDs, so from H0-2 their cached DLIDs lead to H0-2 itself (the
// issue's 0-hop case), and from H0-0 to H0-2. The first trace after the
// move of every destination ends at the port it names, at a LID stock
// ibnetdiscover shows for it now: resolved anew at once, never ok at
// another node.
func TestMovedLIDsOnIbsim(t *testing.T) {
	ibsimtest.Require(t)
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "fattree-mini.net"),
		ibsimtest.Options{KeepSM: true, SMHost: true, SweepSeconds: 1, Lifetime: 3 * time.Minute})
	// ibsim serves at most 10 clients: six agents, two tracers, OpenSM
	// and ibnetdiscover.
	hosts := []string{"H1-1", "H1-2"}
	for _, n := range append([]string{"L0", "L1", "S0", "S1"}, hosts...) {
		e := ibmad.NewEngine(fab.Dial(n, true), ibmad.Options{})
		if _, err := agent.New(e, agent.Config{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
	}
	type source struct {
		node   string
		eng    *ibmad.Engine
		tr     *Tracer
		events *logged
	}
	var srcs []*source
	clock := newFakeClock()
	for _, n := range []string{"H0-0", "H0-2"} {
		s := &source{node: n, events: &logged{}}
		s.eng = ibmad.NewEngine(fab.Dial(n, false), ibmad.Options{Timeout: 2 * time.Second, PortRefresh: 10 * time.Millisecond})
		t.Cleanup(func() { s.eng.Close() })
		s.tr = New(s.eng, Options{Timeout: 2 * time.Second, ResolveTTL: new(time.Hour), Clock: clock, Log: s.events.log})
		srcs = append(srcs, s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	cas := discoverCAs(t, fab, "H0-0")
	type named struct {
		host string
		d    Destination
	}
	var ds []named
	for _, h := range hosts {
		p, ok := cas[h]
		if !ok {
			t.Fatalf("ibnetdiscover shows no %s: %v", h, cas)
		}
		for _, d := range []Destination{{Node: h}, {GUID: p.guid}, {GID: ibmad.MakeGID(ibmad.DefaultGIDPrefix, p.guid)}} {
			ds = append(ds, named{h, d})
		}
	}
	// check traces every destination once from s: each must end at its
	// port; the DLIDs it traced are checked against ibnetdiscover (owns).
	type traced struct {
		from, what, host string
		d                Destination
		dlid             uint16
	}
	var dlids []traced
	check := func(what string, s *source, wantFast bool) {
		t.Helper()
		for _, n := range ds {
			r := s.tr.Trace(ctx, n.d)
			if len(r.Hops) == 0 {
				t.Fatalf("%s, from %s, %s: %s %v, no hops", what, s.node, n.d, r.Status, r.Err)
			}
			last := r.Hops[len(r.Hops)-1]
			if r.Status == StatusOK && last.PortGUID != cas[n.host].guid {
				t.Fatalf("%s, from %s, %s: ok at %s (DLID %d, %d hops), not %s", what, s.node, n.d, last.NodeDesc, r.DLID,
					r.PathHops(), n.host)
			}
			if r.Status != StatusOK {
				t.Fatalf("%s, from %s, %s: %s %v, at %s; want ok at %s", what, s.node, n.d, r.Status, r.Err, last.NodeDesc, n.host)
			}
			if wantFast && !r.FastPath {
				t.Fatalf("%s, from %s, %s: not confirmed by the fast path", what, s.node, n.d)
			}
			dlids = append(dlids, traced{s.node, what, n.host, n.d, r.DLID})
		}
	}
	owned := func(cas map[string]caPort) {
		t.Helper()
		for _, x := range dlids {
			if !cas[x.host].owns(x.dlid) {
				t.Fatalf("%s, from %s, %s: DLID %d, but ibnetdiscover gives %s LID %d LMC %d", x.what, x.from, x.d, x.dlid,
					x.host, cas[x.host].lid, cas[x.host].lmc)
			}
		}
		dlids = nil
	}
	for _, s := range srcs {
		check("first traces", s, false)
		check("repeated", s, true)
		if got := s.events.all(); len(got) != 0 {
			t.Fatalf("from %s, before the move: events %q", s.node, got)
		}
	}
	owned(cas)

	// The move, as issue 24 reproduced it: guid2lid deleted, LMC 2.
	fab.KillSM()
	if err := os.Remove(filepath.Join(fab.Dir, "guid2lid")); err != nil {
		t.Fatal(err)
	}
	fab.StartSMArgs("-l", "2")
	movedTo := map[string]uint16{}
	for _, s := range srcs {
		movedTo[s.node] = waitLIDSettled(t, s.eng)
		check("after LMC 2", s, false)
		check("after LMC 2, repeated", s, true)
	}
	// The killed OpenSM keeps its ibsim client slot: make room for
	// ibnetdiscover.
	for _, s := range srcs {
		s.eng.Close()
	}
	lmc2 := discoverCAs(t, fab, "H0-0")
	owned(lmc2)
	checkMoved(t, hosts, cas, lmc2, movedTo)
	checkMoveLogged(t, srcs[0].events, srcs[1].events, cas["H0-0"].lid, lmc2["H0-0"].lid, len(ds))
	t.Logf("LIDs before %v, after LMC 2 %v", cas, lmc2)
}

// checkMoved checks the move itself against ibnetdiscover's view before
// and after it: the hosts' old LIDs are now H0-2's, H0-0's LID moved and
// H0-2's stayed, and the tracers' engines saw the new LIDs (movedTo).
func checkMoved(t *testing.T, hosts []string, before, after map[string]caPort, movedTo map[string]uint16) {
	t.Helper()
	for _, h := range hosts {
		if o := ownerOf(after, before[h].lid); o != "H0-2" {
			t.Fatalf("after LMC 2, %s's old LID %d is %q's, want H0-2's (before %v, after %v)", h, before[h].lid, o, before, after)
		}
	}
	if after["H0-0"].lid == before["H0-0"].lid || after["H0-2"].lid != before["H0-2"].lid ||
		movedTo["H0-0"] != after["H0-0"].lid || movedTo["H0-2"] != after["H0-2"].lid {
		t.Fatalf("after LMC 2: want H0-0's LID moved, H0-2's kept (before %v, after %v, the tracers saw %v)", before, after, movedTo)
	}
}

// checkMoveLogged checks what the two tracers logged after the move: H0-0
// its own move once (from oldLID to newLID), and resolved everything
// anew; H0-2 found each of its n stale DLIDs on its trace and resolved
// it again.
func checkMoveLogged(t *testing.T, fromH00, fromH02 *logged, oldLID, newLID uint16, n int) {
	t.Helper()
	want := fmt.Sprint(true, []any{"msg", "the local port's LID changed: resolving every destination again",
		"old_lid", uint32(oldLID), "new_lid", newLID})
	if got := fromH00.all(); len(got) != 1 || got[0] != want {
		t.Fatalf("from H0-0, after LMC 2: events %q, want once %q", got, want)
	}
	if got := fromH02.all(); len(got) != n {
		t.Fatalf("from H0-2, after LMC 2: events %q, want one re-resolution per destination", got)
	}
	for _, e := range fromH02.all() {
		if !strings.Contains(e, "resolving it again") || !strings.Contains(e, "H0-2") {
			t.Fatalf("from H0-2: event %q, want a re-resolution that had reached H0-2 itself", e)
		}
	}
}

// waitLIDSettled waits (bounded) until the local port has its LMC-2 LID
// (an LMC of 2 in the engine's port attributes), and returns it.
func waitLIDSettled(t *testing.T, e *ibmad.Engine) uint16 {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; {
		if p, err := e.Port(); err == nil && p.LMC == 2 && p.LID != 0 {
			return p.LID
		}
		if time.Now().After(deadline) {
			p, err := e.Port()
			t.Fatalf("the local port never got LMC 2: %+v %v", p, err)
		}
		time.Sleep(time.Millisecond)
	}
}
