package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// simCLI runs the command in-process on the built-in sim, attached at node.
func simCLI(t *testing.T, topo, node string, args ...string) (string, string, int) {
	t.Helper()
	base := []string{"--ib.transport=sim", "--sim.topology=" + filepath.Join(topoDir, topo), "--sim.node=" + node}
	var out, errb bytes.Buffer
	code := run(append(base, args...), &out, &errb)
	return out.String(), errb.String(), code
}

func simJSON(t *testing.T, topo, node string, args ...string) []trace.JSONResult {
	t.Helper()
	out, errOut, code := simCLI(t, topo, node, append(args, "--format=json")...)
	var rs []trace.JSONResult
	if err := json.Unmarshal([]byte(out), &rs); err != nil || code != 0 {
		t.Fatalf("%v: exit %d, %v\n%s%s", args, code, err, out, errOut)
	}
	return rs
}

// hopSeq is the path as ibtracert prints it: node, ports and LID per hop.
func hopSeq(r trace.JSONResult) string {
	var b strings.Builder
	for _, h := range r.Hops {
		fmt.Fprintf(&b, "%d>%s/%s lid %d>%d; ", h.InPort, h.NodeGUID, h.PortGUID, h.LID, h.OutPort)
	}
	return b.String()
}

func simLIDs(t *testing.T, topo string) map[string]uint16 {
	t.Helper()
	st, err := sim.LoadTopology(filepath.Join(topoDir, topo))
	if err != nil {
		t.Fatal(err)
	}
	f, err := sim.New(st, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]uint16{}
	for _, n := range f.Nodes() {
		port := 1
		if n.Type.String() == "switch" {
			port = 0
		}
		lid, err := f.LIDOf(n.Name, port)
		if err != nil {
			t.Fatal(err)
		}
		out[n.Name] = lid
	}
	return out
}

// TestBareLID: `ibtracer 13` is `ibtracer -l 13`.
func TestBareLID(t *testing.T) {
	lids := simLIDs(t, "fattree-mini.net")
	for name, lid := range lids {
		bare := simJSON(t, "fattree-mini.net", firstCA(t, lids), "--no-validate", fmt.Sprint(lid))
		flag := simJSON(t, "fattree-mini.net", firstCA(t, lids), "--no-validate", "-l", fmt.Sprint(lid))
		if len(bare) != 1 || bare[0].DLID != lid || hopSeq(bare[0]) != hopSeq(flag[0]) || bare[0].SourceLID != 0 {
			t.Fatalf("%s: `ibtracer %d` %+v, -l: %+v", name, lid, bare, flag)
		}
	}
	for _, bad := range [][]string{{"0"}, {"49152"}, {"x"}, {"1", "2", "3"}, {"1", "2", "--all"}} {
		_, errOut, code := simCLI(t, "fattree-mini.net", firstCA(t, lids), bad...)
		if code != exitUsage || !strings.Contains(errOut, "ibtracer: ") {
			t.Errorf("%v: exit %d %q, want bad usage", bad, code, errOut)
		}
	}
}

func firstCA(t *testing.T, lids map[string]uint16) string {
	t.Helper()
	best := ""
	for n := range lids {
		if (strings.HasPrefix(n, "H") || strings.HasPrefix(n, "host")) && (best == "" || n < best) {
			best = n
		}
	}
	if best == "" {
		t.Fatal("no host in the topology")
	}
	return best
}

// TestSrcDstOnSim: `ibtracer SRC DST` from one host takes the same path,
// hop for hop, as `ibtracer DST` run on the source itself, for CA and
// switch sources, and says where it started.
func TestSrcDstOnSim(t *testing.T) {
	for _, topo := range []string{"two-switch.net", "fattree-mini.net"} {
		lids := simLIDs(t, topo)
		var names []string
		for n := range lids {
			names = append(names, n)
		}
		here := firstCA(t, lids)
		if topo == "two-switch.net" {
			here = "host1"
		}
		pairs := 0
		for _, src := range names {
			for _, dst := range names {
				if src == dst || src == here {
					continue
				}
				from := simJSON(t, topo, here, "--no-validate", fmt.Sprint(lids[src]), fmt.Sprint(lids[dst]))
				if len(from) != 1 || from[0].Status != "ok" || from[0].SourceLID != lids[src] {
					t.Fatalf("%s -> %s: %+v", src, dst, from)
				}
				var direct []trace.JSONResult
				if strings.HasPrefix(src, "H") || strings.HasPrefix(src, "host") {
					direct = simJSON(t, topo, src, "--no-validate", fmt.Sprint(lids[dst]))
				} else {
					continue // the sim attaches to CAs: a switch source is checked against ibtracert on ibsim
				}
				if got, want := hopSeq(from[0]), hopSeq(direct[0]); got != want {
					t.Errorf("%s -> %s from %s:\n got  %s\n want %s", src, dst, here, got, want)
				}
				pairs++
			}
		}
		if pairs < 10 {
			t.Fatalf("%s: %d pairs compared", topo, pairs)
		}
		t.Logf("%s: %d SRC DST paths equal to the trace run at the source", topo, pairs)
	}
}

// TestSrcDstValidates: the agents validate a SRC DST trace (their verdicts
// are for MADs sent from here), and the summary names the source.
func TestSrcDstValidates(t *testing.T) {
	lids := simLIDs(t, "two-switch.net")
	rs := simJSON(t, "two-switch.net", "host1", fmt.Sprint(lids["host4"]), fmt.Sprint(lids["host2"]))
	if rs[0].Status != "ok" || rs[0].PathHops != 2 {
		t.Fatalf("%+v", rs[0])
	}
	for _, h := range rs[0].Hops[1:] {
		if h.AgentStatus != "validated" && h.AgentStatus != "validated_other_link" {
			t.Fatalf("hop %d %s: %s", h.Hop, h.NodeDesc, h.AgentStatus)
		}
	}
	out, _, code := simCLI(t, "two-switch.net", "host1", fmt.Sprint(lids["host4"]), fmt.Sprint(lids["host2"]))
	if want := fmt.Sprintf("lid %d from lid %d: ok: 2 hops, %s, %s", lids["host2"], lids["host4"], rs[0].Verdicts, rs[0].Coverage); code != 0 || !strings.HasPrefix(out, want) {
		t.Fatalf("exit %d %q, want %q", code, out, want)
	}
	// The local node as a later hop is not asked: a MAD to itself crosses no link.
	rs = simJSON(t, "two-switch.net", "host1", fmt.Sprint(lids["host3"]), fmt.Sprint(lids["host1"]))
	if last := rs[0].Hops[len(rs[0].Hops)-1]; rs[0].Status != "ok" || last.NodeDesc != "host1" || last.AgentStatus != "not_asked" {
		t.Fatalf("%+v", rs[0])
	}
	// An unreachable source is an unreachable trace that says so.
	out, _, code = simCLI(t, "two-switch.net", "host1", "-t", "50", "-r", "1", "300", fmt.Sprint(lids["host2"]))
	if code != exitUnreachable || !strings.Contains(out, "the source, LID 300: ") {
		t.Fatalf("exit %d %q", code, out)
	}
}

// TestCAPortAliases: -P is --ib.port (host5 has two ports), -C is --ib.ca,
// and the two spellings must agree.
func TestCAPortAliases(t *testing.T) {
	lids := simLIDs(t, "two-switch.net")
	for _, p := range []string{"1", "2"} {
		a := simJSON(t, "two-switch.net", "host5", "--no-validate", "-P", p, fmt.Sprint(lids["host2"]))
		b := simJSON(t, "two-switch.net", "host5", "--no-validate", "--ib.port", p, fmt.Sprint(lids["host2"]))
		if fmt.Sprint(a[0].Hops[0].OutPort) != p || hopSeq(a[0]) != hopSeq(b[0]) {
			t.Fatalf("-P %s: %s; --ib.port: %s", p, hopSeq(a[0]), hopSeq(b[0]))
		}
	}
	for _, args := range [][]string{{"-P", "1", "--ib.port", "2"}, {"-C", "mlx5_0", "--ib.ca", "mlx5_1"}, {"-P", "x"}} {
		_, errOut, code := simCLI(t, "two-switch.net", "host5", append(args, "1")...)
		if code != exitUsage {
			t.Errorf("%v: exit %d %q, want bad usage", args, code, errOut)
		}
	}
	o := options{caAlias: "mlx5_2", portAlias: "2"}
	if err := o.aliases(); err != nil || o.ib.CA != "mlx5_2" || o.ib.Port != 2 {
		t.Fatalf("%v %+v", err, o.ib)
	}
}

// TestGUIDFlag: -G GUID traces a port GUID (resolved through the SA).
func TestGUIDFlag(t *testing.T) {
	lids := simLIDs(t, "two-switch.net")
	byLID := simJSON(t, "two-switch.net", "host1", "--no-validate", fmt.Sprint(lids["host2"]))
	guid := byLID[0].Hops[len(byLID[0].Hops)-1].PortGUID
	byGUID := simJSON(t, "two-switch.net", "host1", "--no-validate", "-G", guid)
	if byGUID[0].DLID != lids["host2"] || hopSeq(byGUID[0]) != hopSeq(byLID[0]) {
		t.Fatalf("-G %s: %+v", guid, byGUID[0])
	}
}

// TestNodeNameMap: -n FILE gives hops their site names in JSON (node_name,
// beside node_desc) and in the verbose text (as ibtracert shows them).
func TestNodeNameMapCLI(t *testing.T) {
	lids := simLIDs(t, "two-switch.net")
	plain := simJSON(t, "two-switch.net", "host1", "--no-validate", fmt.Sprint(lids["host2"]))
	var m strings.Builder
	m.WriteString("# test map\n")
	for _, h := range plain[0].Hops {
		fmt.Fprintf(&m, "%s \"site-%s\"\n", h.NodeGUID, h.NodeDesc)
	}
	file := filepath.Join(t.TempDir(), "ib-node-name-map")
	if err := os.WriteFile(file, []byte(m.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"-n", "--node-name-map"} {
		rs := simJSON(t, "two-switch.net", "host1", "--no-validate", flag, file, fmt.Sprint(lids["host2"]))
		for _, h := range rs[0].Hops {
			if h.NodeName != "site-"+h.NodeDesc || h.NodeDesc == "" {
				t.Fatalf("%s: hop %d: node_name %q node_desc %q", flag, h.Hop, h.NodeName, h.NodeDesc)
			}
		}
	}
	out, _, _ := simCLI(t, "two-switch.net", "host1", "--no-validate", "-v", "-n", file, fmt.Sprint(lids["host2"]))
	if !strings.Contains(out, `"site-sw2"`) || !strings.Contains(out, `To ca {`) || !strings.Contains(out, `"site-host2"`) {
		t.Fatalf("verbose:\n%s", out)
	}
	if err := os.WriteFile(file, []byte("0x1 \"a\"\nnot-a-guid \"b\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := simCLI(t, "two-switch.net", "host1", "-n", file, "1")
	if code != exitUsage || !strings.Contains(errOut, file+":2: ") {
		t.Fatalf("bad map: exit %d %q", code, errOut)
	}
}

// TestAllSkipsSourceAndTotals: --all traces every CA port but the local
// one, ends with totals, and shows progress only on a terminal.
func TestAllSkipsSourceAndTotals(t *testing.T) {
	lids := simLIDs(t, "two-switch.net")
	rs := simJSON(t, "two-switch.net", "host1", "--all")
	seen := map[uint16]bool{}
	for _, r := range rs {
		seen[r.DLID] = true
		if r.DLID == lids["host1"] {
			t.Fatalf("--all traced the source port itself (lid %d)", r.DLID)
		}
	}
	// Every other CA port: host2..host5, host5 twice.
	if len(rs) != 5 || !seen[lids["host2"]] || !seen[lids["host5"]] {
		t.Fatalf("--all traced %v", seen)
	}
	out, errOut, code := simCLI(t, "two-switch.net", "host1", "--all", "--sim.agents=hosts", "--validate=agent") // auto would ask the switches' SMAs
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// Switches run no agent with --sim.agents=hosts: every path crosses 1 or 2.
	if code != 0 || len(lines) != 6 || !strings.HasPrefix(lines[5], "totals: 5 traced, 5 ok, 0 mismatches, 0 unreachable; hops of the ok traces: ") ||
		hopCounts(lines[5])["unsupported"] == 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	// The JSON carries the same counts, and its totals line is the text's.
	rs = simJSON(t, "two-switch.net", "host1", "--all", "--sim.agents=hosts", "--validate=agent")
	var sum trace.Verdicts
	for _, r := range rs {
		sum.Add(r.Verdicts)
	}
	if !strings.Contains(lines[5], ", "+sum.String()+"; ") {
		t.Fatalf("JSON verdicts %s, the text's totals %q", sum, lines[5])
	}
	if strings.Contains(errOut, "traced 1/") {
		t.Fatalf("progress on a non-terminal: %q", errOut)
	}
	_, errOut, _ = simCLI(t, "two-switch.net", "host1", "--all", "--format=json")
	if !strings.Contains(errOut, "totals: 5 traced, 5 ok") {
		t.Fatalf("JSON totals not on stderr: %q", errOut)
	}
	old := isTerminal
	isTerminal = func(io.Writer) bool { return true }
	defer func() { isTerminal = old }()
	_, errOut, _ = simCLI(t, "two-switch.net", "host1", "--all")
	if !strings.Contains(errOut, "\r\033[Kibtracer: traced 5/5, 0 failing") || !strings.HasSuffix(errOut, "\r\033[K") {
		t.Fatalf("progress on a terminal: %q", errOut)
	}
}

// TestIsTerminal: a pipe is not a terminal; a pseudo-terminal is.
func TestIsTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if isTerminal(w) || isTerminal(&bytes.Buffer{}) {
		t.Fatal("a pipe or a buffer taken for a terminal")
	}
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	if !isTerminal(ptmx) {
		t.Fatal("a pseudo-terminal not taken for a terminal")
	}
}
