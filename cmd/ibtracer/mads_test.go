package main

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/internal/ibopen"
)

// totalsMADs reads a totals line's "MADs: N sent".
var totalsMADs = regexp.MustCompile(`; MADs: (\d+) sent\b`)

// simRunMADs runs the command in-process on the built-in demo fabric
// (--ib.transport=sim) with args, the fabric's SA refusing what refuse
// says, and returns its stdout, stderr, exit status and the number of MADs
// the simulated fabric was sent during the run (sim.Fabric.MADs: every
// MAD sent into it through a transport, whatever sent it; its SMAs and SA
// answer inside it).
func simRunMADs(t *testing.T, refuse sim.SARefusal, args ...string) (string, string, int, uint64) {
	t.Helper()
	var fab *sim.Fabric
	var base uint64
	onOpened = func(o *ibopen.Opened) {
		fab = o.Fabric
		lastFabric, lastNode = fab, o.Node
		fab.SetSARefusal(refuse)
		base = fab.MADs()
	}
	defer func() { onOpened = nil }()
	var out, errb bytes.Buffer
	code := run(append([]string{"--ib.transport=sim"}, args...), &out, &errb)
	if fab == nil {
		t.Fatalf("the run opened no simulated fabric: exit %d\n%s%s", code, out.String(), errb.String())
	}
	return out.String(), errb.String(), code, fab.MADs() - base
}

// totalsSplit reads who sent the MADs of a totals line: the traces,
// the link health checks (0 when not said) and the rest of the run.
var totalsSplit = regexp.MustCompile(`; MADs: \d+ sent \((\d+) by the traces(?:, (\d+) by the link health checks)?, (\d+) by the rest of the run\)`)

// lineMADs sums the "N MADs" of the per-destination lines.
var lineMADs = regexp.MustCompile(`, (\d+) MADs in `)

// TestAllTotalsCountEveryMADTheRunSent: --all's totals line says how many
// MADs the whole run sent, the listing of the CA ports included, not only
// those the traces count. The count it is checked against is the
// simulated fabric's (every MAD that reached it), not the engine's or the
// traces'. With --no-validate no agent answers, so every MAD the fabric
// was sent came from the run. Cut short: an SA that serves no GetTable
// (sim.SARefusal.NoTables; OpenSM's table comes cut short under ibsim)
// makes the listing read the local switch's forwarding table and trace
// what it forwards (allrouted.go): the walks to LIDs that are not CA
// ports are no listed trace's, and count in the rest with the table's
// GetTable and the forwarding table's SMPs. --via prints the same line;
// --health's checks are counted apart.
func TestAllTotalsCountEveryMADTheRunSent(t *testing.T) {
	for _, tc := range []struct {
		name   string
		refuse sim.SARefusal
		args   []string
	}{
		{"table", sim.SARefusal{}, nil},
		{"cut table", sim.SARefusal{NoTables: true}, nil},
		{"via", sim.SARefusal{NoTables: true}, []string{"--via", "SOURCE:1"}}, // every destination crosses it
		{"health", sim.SARefusal{}, []string{"--health", "--pm"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--all", "--no-validate"}, tc.args...)
			if tc.name == "via" { // the link of the node the runs attach to
				simRunMADs(t, sim.SARefusal{}, "-l", "1", "--no-validate")
				args[len(args)-1] = sourceGUID(t) + ":1"
			}
			out, errOut, code, fabricMADs := simRunMADs(t, tc.refuse, args...)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			totals := lines[len(lines)-1]
			m, split := totalsMADs.FindStringSubmatch(totals), totalsSplit.FindStringSubmatch(totals)
			if code != exitOK || m == nil || split == nil {
				t.Fatalf("exit %d, no totals' MADs by sender:\n%s%s", code, out, errOut)
			}
			n, _ := strconv.Atoi(m[1])
			traces, _ := strconv.Atoi(split[1])
			health, _ := strconv.Atoi(split[2])
			rest, _ := strconv.Atoi(split[3])
			t.Logf("the fabric was sent %d MADs; %s", fabricMADs, totals)
			if uint64(n) != fabricMADs {
				t.Fatalf("the totals say %d MADs sent, the fabric was sent %d:\n%s", n, fabricMADs, totals)
			}
			if g, p, _ := strings.Cut(args[len(args)-1], ":"); tc.name == "via" && (!strings.HasPrefix(out, "link ") ||
				!strings.Contains(lines[0], " {"+g+"}:"+p+": 15 of 15 traced destinations cross it")) {
				t.Fatalf("--via:\n%s", out)
			}
			if tc.name != "via" { // --via's lines are crossings, not traces
				sum := 0
				for _, g := range lineMADs.FindAllStringSubmatch(out, -1) {
					v, _ := strconv.Atoi(g[1])
					sum += v
				}
				if sum != traces {
					t.Fatalf("the lines count %d MADs, the totals %d by the traces:\n%s", sum, traces, out)
				}
			}
			if (health > 0) != (tc.name == "health") {
				t.Fatalf("%d MADs by the link health checks:\n%s", health, totals)
			}
			want := 1 // the NodeRecord GetTable
			if tc.refuse.NoTables {
				want++ // and at least one LFT block of the local switch
			}
			if rest < want {
				t.Fatalf("%d MADs by the rest of the run, want at least %d for the listing:\n%s", rest, want, totals)
			}
		})
	}
}

// fabricOf is the simulated fabric the last simRunMADs ran on.
func fabricOf(t *testing.T) *sim.Fabric {
	t.Helper()
	if lastFabric == nil {
		t.Fatal("no simulated fabric")
	}
	return lastFabric
}

// lastFabric and lastNode: the simulated fabric the last simRunMADs ran
// on, and the node it was attached to.
var (
	lastFabric *sim.Fabric
	lastNode   string
)

// sourceGUID is the node GUID of the node the last simRunMADs was
// attached to (the built-in fabric is the same from run to run).
func sourceGUID(t *testing.T) string {
	t.Helper()
	n := fabricOf(t).Node(lastNode)
	if n == nil {
		t.Fatalf("no node %q", lastNode)
	}
	return n.GUID.String()
}

// maxLID is the highest LID of any port of f.
func maxLID(f *sim.Fabric) int {
	top := 0
	for _, n := range f.Nodes() {
		for _, p := range n.Ports {
			if p != nil {
				top = max(top, int(p.LID))
			}
		}
	}
	return top
}
