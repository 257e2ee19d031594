package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/trace"
)

// TestViaUsage: a malformed GUID:PORT, or --via with what it does not
// combine with, is bad usage (exit 2) with a message naming the flag.
func TestViaUsage(t *testing.T) {
	lids := simLIDs(t, "fattree-mini.net")
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--via", "0x200002"}, "want NODE:PORT"},
		{[]string{"--via", "0x20000g:4"}, "node GUID"},
		{[]string{"--via", "0x0:4"}, "node GUID"},
		{[]string{"--via", "0x200002:0"}, "port"},
		{[]string{"--via", "0x200002:255"}, "port"},
		{[]string{"--via", "0x200002:x"}, "port"},
		{[]string{"--via", "0x200002:4", "--lmc-all"}, "--lmc-all"},
		{[]string{"--via", "0x200002:4", "--health"}, "--health"},
		{[]string{"--via", "0x200002:4", "-m", "0xc000", "5"}, "-m"},
	} {
		out, errOut, code := simCLI(t, "fattree-mini.net", firstCA(t, lids), tc.args...)
		if code != exitUsage || !strings.Contains(errOut, "--via") || !strings.Contains(errOut, tc.says) || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 naming --via and %q", tc.args, code, out, errOut, tc.says)
		}
	}
}

// viaJSON runs --via's JSON form in-process on topo at src.
func viaJSON(t *testing.T, topo, src string, args ...string) jsonVia {
	t.Helper()
	out, errOut, code := simCLI(t, topo, src, append([]string{"--no-validate", "--format=json"}, args...)...)
	var v jsonVia
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != 0 {
		t.Fatalf("%v: exit %d %v\n%s%s", args, code, err, out, errOut)
	}
	return v
}

// viaAll is --all's JSON from H0-0 on fattree-mini: the paths --via
// is checked against.
func viaAll(t *testing.T) []trace.JSONResult {
	all := simJSON(t, "fattree-mini.net", "H0-0", "--no-validate", "--all")
	if len(all) != 5 {
		t.Fatalf("--all traced %d destinations, want 5", len(all))
	}
	return all
}

// TestViaOnSim: on fattree-mini from H0-0, the link H0-0 - L0 is crossed
// by every destination, at hop 1, whichever end names it.
func TestViaOnSim(t *testing.T) {
	all := viaAll(t)
	h0, l0 := all[0].Hops[0], all[0].Hops[1]
	for _, end := range []string{h0.NodeGUID + ":1", l0.NodeGUID + fmt.Sprintf(":%d", l0.InPort)} {
		v := viaJSON(t, "fattree-mini.net", "H0-0", "--via", end)
		if v.Traced != 5 || len(v.Crossing) != 5 || len(v.Undetermined) != 0 {
			t.Fatalf("--via %s: %+v", end, v)
		}
		for _, c := range v.Crossing {
			if c.Hop != 1 || c.From.NodeGUID != h0.NodeGUID || c.From.Port != 1 || c.To == nil || c.To.NodeGUID != l0.NodeGUID || c.Trace.DLID != c.DLID {
				t.Fatalf("--via %s: %+v", end, c)
			}
		}
	}
}

// TestViaUplinksOnSim: each uplink of L0 (ports 4..7) is crossed by the
// destinations whose --all path leaves L0 by it, named by L0's end or by
// the spine's (the other direction); an uplink nothing uses by none.
func TestViaUplinksOnSim(t *testing.T) {
	all := viaAll(t)
	l0 := all[0].Hops[1]
	crossed := 0
	for port := 4; port <= 7; port++ {
		want := map[uint16]bool{}
		ends := []string{fmt.Sprintf("%s:%d", l0.NodeGUID, port)}
		for _, r := range all {
			if len(r.Hops) > 2 && r.Hops[1].OutPort == uint8(port) {
				want[r.DLID] = true
				ends = append(ends, fmt.Sprintf("%s:%d", r.Hops[2].NodeGUID, r.Hops[2].InPort))
			}
		}
		for _, end := range ends {
			got := map[uint16]bool{}
			for _, c := range viaJSON(t, "fattree-mini.net", "H0-0", "--via", end).Crossing {
				got[c.DLID] = true
				if c.Hop != 2 || c.From.NodeGUID != l0.NodeGUID || int(c.From.Port) != port {
					t.Fatalf("--via %s: %+v", end, c)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("--via %s: %v, want %v", end, got, want)
			}
			crossed += len(got)
		}
	}
	if crossed == 0 {
		t.Fatal("no uplink of L0 is crossed: the test proves nothing")
	}
}

// TestViaTextAndFailures: the text form (a count line, a line per
// destination with its hop, the totals); a destination that cannot be
// traced is undetermined and sets the exit status as without --via; a
// GUID on no traced path is said on stderr.
func TestViaTextAndFailures(t *testing.T) {
	const topo, src = "fattree-mini.net", "H0-0"
	lids := simLIDs(t, topo)
	all := viaAll(t)
	h0, l0 := all[0].Hops[0], all[0].Hops[1]
	out, _, code := simCLI(t, topo, src, "--no-validate", "--via", h0.NodeGUID+":1")
	if code != 0 || !strings.HasPrefix(out, "link H0-0 {"+h0.NodeGUID+"}:1: 5 of 5 traced destinations cross it\n") ||
		strings.Count(out, ": hop 1, \"H0-0\"") != 5 || !strings.Contains(out, "totals: 5 traced") {
		t.Fatalf("text: exit %d\n%s", code, out)
	}
	// A LID nobody has: the trace stops at L0 (no route), before L0's
	// uplinks, so it cannot tell: undetermined, exit 4. The destination
	// given with it crosses the uplink it is routed over.
	var up string
	for _, r := range all {
		if r.DLID == lids["H1-1"] {
			up = fmt.Sprintf("%s:%d", l0.NodeGUID, r.Hops[1].OutPort)
		}
	}
	out, errOut, code := simCLI(t, topo, src, "--no-validate", "--format=json", "--via", up, "-l", "200", "-l", fmt.Sprint(lids["H1-1"]))
	var v jsonVia
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != exitUnreachable {
		t.Fatalf("exit %d %v\n%s%s", code, err, out, errOut)
	}
	if v.Traced != 2 || len(v.Crossing) != 1 || v.Crossing[0].DLID != lids["H1-1"] || len(v.Undetermined) != 1 || v.Undetermined[0].DLID != 200 {
		t.Fatalf("%+v", v)
	}
	out, _, _ = simCLI(t, topo, src, "--no-validate", "--via", up, "-l", "200")
	if !strings.Contains(out, "1 failed before they could tell:\nlid 200: unreachable") {
		t.Fatalf("text, undetermined:\n%s", out)
	}
	// A GUID on no traced path: said on stderr, an empty answer.
	out, errOut, code = simCLI(t, topo, src, "--no-validate", "--via", "0xdead:1")
	if code != 0 || !strings.Contains(out, ": 0 of 5 traced destinations cross it") || !strings.Contains(errOut, "no traced path passes node 0x000000000000dead") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
}

// TestViaByNameOnSim: --via takes the node by its description or its
// node-name-map name as well as by GUID, and finds the same crossings; a
// name two nodes have is bad usage that lists both, and so is a name no
// traced node has.
func TestViaByNameOnSim(t *testing.T) {
	const topo, src = "fattree-mini.net", "H0-0"
	all := viaAll(t)
	h0, l0 := all[0].Hops[0], all[0].Hops[1]
	dlids := func(v jsonVia) string {
		var s []string
		for _, c := range v.Crossing {
			s = append(s, fmt.Sprint(c.DLID))
		}
		return strings.Join(s, ",")
	}
	mapFile := filepath.Join(t.TempDir(), "names")
	if err := os.WriteFile(mapFile, []byte(fmt.Sprintf("%s \"leaf-0\"\n%s \"S0\"\n", l0.NodeGUID, h0.NodeGUID)), 0o644); err != nil {
		t.Fatal(err)
	}
	for port := 1; port <= 7; port++ {
		want := viaJSON(t, topo, src, "--via", fmt.Sprintf("%s:%d", l0.NodeGUID, port))
		for _, args := range [][]string{{"--via", fmt.Sprintf("L0:%d", port)}, {"-n", mapFile, "--via", fmt.Sprintf("leaf-0:%d", port)}} {
			got := viaJSON(t, topo, src, args...)
			if dlids(got) != dlids(want) || got.Link != want.Link {
				t.Errorf("%v: link %s crossed by %q, want link %s crossed by %q", args, got.Link, dlids(got), want.Link, dlids(want))
			}
		}
	}
	out, _, code := simCLI(t, topo, src, "--no-validate", "-n", mapFile, "--via", "leaf-0:1")
	if code != 0 || !strings.HasPrefix(out, "link leaf-0 {"+l0.NodeGUID+"}:1: 5 of 5 traced destinations cross it\n") {
		t.Errorf("text: exit %d\n%s", code, out)
	}
	for _, tc := range []struct {
		args []string
		says []string
	}{
		{[]string{"-n", mapFile, "--via", "S0:1"}, []string{`the name "S0" matches 2 nodes`, "S0 {" + h0.NodeGUID + "}", "give one by its node GUID"}},
		{[]string{"--via", "nope:1"}, []string{`no node is named "nope"`}},
	} {
		out, errOut, code := simCLI(t, topo, src, append([]string{"--no-validate"}, tc.args...)...)
		for _, s := range tc.says {
			if code != exitUsage || out != "" || !strings.Contains(errOut, "--via") || !strings.Contains(errOut, s) {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 naming --via and %q", tc.args, code, out, errOut, s)
			}
		}
	}
}
