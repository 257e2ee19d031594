package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

var quotedRe = regexp.MustCompile(`"(.*)"$`)

// TestSrcDstEqualsIbtracert: `ibtracer SRC DST` and the stock `ibtracert
// SRC DST`, run on the same ibsim node under OpenSM, print the same hop
// sequence, for CA and switch sources near and far; with the same
// node-name map both show the same site names.
func TestSrcDstEqualsIbtracert(t *testing.T) {
	ibsimtest.Require(t)
	for _, tc := range []struct {
		file, here string
		max        int
	}{
		{"two-switch.net", "host1", 0},
		{"chain-5.net", "hostA", 0},
		{"fattree-128.net", "H0-0", 40},
	} {
		t.Run(tc.file, func(t *testing.T) {
			fab := ibsimtest.Start(t, filepath.Join(topoDir, tc.file), ibsimtest.Options{})
			lids := allLIDs(t, fab, tc.here)
			var all []uint16
			for l := range lids {
				all = append(all, l)
			}
			sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
			// Pairs: every ordered pair on the small fabrics; on the fat
			// tree a spread of them, switch sources included.
			type pair struct{ src, dst uint16 }
			var pairs []pair
			for i, s := range all {
				for j, d := range all {
					if s == d || tc.max > 0 && (i*7+j*3)%23 != 0 {
						continue
					}
					pairs = append(pairs, pair{s, d})
				}
			}
			if tc.max > 0 && len(pairs) > tc.max {
				pairs = pairs[:tc.max]
			}
			// A node-name map for every node, read by both tools.
			var m strings.Builder
			m.WriteString("# site names\n")
			guids := nodeGUIDs(t, fab, tc.here, all[0])
			for g, desc := range guids {
				fmt.Fprintf(&m, "%s \"site %s\"\n", g, desc)
			}
			mapFile := filepath.Join(t.TempDir(), "node-name-map")
			if err := os.WriteFile(mapFile, []byte(m.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			switchSources, remote := 0, 0
			for _, p := range pairs {
				out, errOut, code := runCLI(t, fab, tc.here, "--no-validate", "--format=json", "-n", mapFile,
					strconv.Itoa(int(p.src)), strconv.Itoa(int(p.dst)))
				var rs []trace.JSONResult
				if err := json.Unmarshal([]byte(out), &rs); err != nil || code != 0 || len(rs) != 1 {
					t.Fatalf("%d %d: exit %d %v\n%s%s", p.src, p.dst, code, err, out, errOut)
				}
				want, err := fab.Tool(tc.here, "ibtracert", "--node-name-map", mapFile, strconv.Itoa(int(p.src)), strconv.Itoa(int(p.dst)))
				if err != nil {
					t.Fatalf("ibtracert %d %d: %v", p.src, p.dst, err)
				}
				if err := compareWithIbtracert(rs[0], want); err != nil {
					t.Fatalf("%d -> %d: %v\nibtracert:\n%s", p.src, p.dst, err, want)
				}
				lines := strings.Split(strings.TrimSpace(want), "\n")
				for k, line := range lines {
					h := rs[0].Hops[min(k, len(rs[0].Hops)-1)]
					if q := quotedRe.FindStringSubmatch(line); q == nil || q[1] != h.NodeName || h.NodeName == "" {
						t.Fatalf("%d -> %d line %d: ibtracert %q, our node_name %q", p.src, p.dst, k, line, h.NodeName)
					}
				}
				if rs[0].Hops[0].NodeType == "switch" {
					switchSources++
				}
				if rs[0].Hops[0].LID != rs[0].SourceLID || rs[0].SourceLID != p.src {
					t.Fatalf("%d -> %d: source lid %d, first hop lid %d", p.src, p.dst, rs[0].SourceLID, rs[0].Hops[0].LID)
				}
				if lids[p.src] != tc.here {
					remote++
				}
			}
			if switchSources == 0 || remote == 0 {
				t.Fatalf("%d pairs, %d from a switch, %d from a remote port", len(pairs), switchSources, remote)
			}
			t.Logf("%d SRC DST paths equal to ibtracert's (%d from a switch, %d from another node)", len(pairs), switchSources, remote)
		})
	}
}

// nodeGUIDs returns every node's GUID and description, from our own
// --all-free JSON traces from here to every LID (the first hop's and the
// last hop's node).
func nodeGUIDs(t *testing.T, fab *ibsimtest.Fabric, here string, _ uint16) map[string]string {
	t.Helper()
	args := []string{"--no-validate", "--format=json"}
	for lid := range allLIDs(t, fab, here) {
		args = append(args, "-l", strconv.Itoa(int(lid)))
	}
	out, errOut, code := runCLI(t, fab, here, args...)
	var rs []trace.JSONResult
	if err := json.Unmarshal([]byte(out), &rs); err != nil || code != 0 {
		t.Fatalf("exit %d %v %s", code, err, errOut)
	}
	g := map[string]string{}
	for _, r := range rs {
		for _, h := range r.Hops {
			g[h.NodeGUID] = h.NodeDesc
		}
	}
	return g
}
