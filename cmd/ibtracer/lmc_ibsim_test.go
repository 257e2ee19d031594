package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// TestLMCAllEqualsIbtracertPerLID: OpenSM with LMC 2 gives every CA port
// four LIDs and routes them apart; `ibtracer --lmc-all` traces each, and
// for every destination, every LID offset and two sources, the path equals
// stock ibtracert's for that DLID.
func TestLMCAllEqualsIbtracertPerLID(t *testing.T) {
	ibsimtest.Require(t)
	for _, tc := range []struct {
		file    string
		sources []string
	}{
		{"fattree-mini.net", []string{"H0-0", "H1-2"}},
		{"fattree-128.net", []string{"H0-0", "H11-6"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			fab := ibsimtest.Start(t, filepath.Join(topoDir, tc.file), ibsimtest.Options{SMArgs: []string{"-l", "2"}})
			lids := allLIDs(t, fab, tc.sources[0])
			total, multi := 0, 0
			for _, src := range tc.sources {
				args := []string{"--format=json", "--no-validate", "--lmc-all"}
				n := 0
				for lid := range lids {
					args = append(args, "-l", strconv.Itoa(int(lid)))
					n++
				}
				out, errOut, code := runCLI(t, fab, src, args...)
				if code != 0 {
					t.Fatalf("ibtracer exit %d: %s", code, errOut)
				}
				var sets []trace.JSONPathSet
				if err := json.Unmarshal([]byte(out), &sets); err != nil {
					t.Fatal(err)
				}
				if len(sets) != n {
					t.Fatalf("%d path sets for %d LIDs", len(sets), n)
				}
				srcLID := sets[0].Paths[0].Hops[0].LID
				var mu sync.Mutex
				compared, mads, traces, ca4 := 0, 0, 0, 0
				sem := make(chan struct{}, 4)
				var wg sync.WaitGroup
				for _, ps := range sets {
					last := ps.Paths[0].Hops[len(ps.Paths[0].Hops)-1]
					if last.NodeType == "ca" {
						if ps.LMC != 2 || len(ps.Paths) != 4 {
							t.Fatalf("%s: LMC %d, %d paths; OpenSM -l 2 gives CAs LMC 2", ps.Destination, ps.LMC, len(ps.Paths))
						}
						ca4++
					}
					if ps.Distinct > 1 {
						multi++
					}
					for i, r := range ps.Paths {
						if r.DLID != ps.BaseLID+uint16(i) {
							t.Fatalf("%s: path %d traced DLID %d, want %d", ps.Destination, i, r.DLID, ps.BaseLID+uint16(i))
						}
						if r.DLID >= srcLID && r.DLID < srcLID+4 && last.NodeType == "ca" && r.PathHops == 0 {
							continue // the source port itself
						}
						mads += r.MADs
						traces++
						wg.Add(1)
						sem <- struct{}{}
						go func(r trace.JSONResult) {
							defer wg.Done()
							defer func() { <-sem }()
							want, err := fab.Tool(src, "ibtracert", strconv.Itoa(int(srcLID)), strconv.Itoa(int(r.DLID)))
							if err != nil {
								t.Errorf("LID %d: %v", r.DLID, err)
								return
							}
							if err := compareWithIbtracert(r, want); err != nil {
								t.Errorf("from %s to LID %d: %v", src, r.DLID, err)
								return
							}
							mu.Lock()
							compared++
							mu.Unlock()
						}(r)
					}
				}
				wg.Wait()
				if ca4 == 0 {
					t.Fatal("no CA destination traced")
				}
				total += compared
				t.Logf("from %s (LID %d): %d per-LID paths equal ibtracert's (%d CA ports x 4 LIDs), %.1f MADs per LID trace",
					src, srcLID, compared, ca4, float64(mads)/float64(max(traces, 1)))
			}
			if multi == 0 {
				t.Fatal("no destination has more than one distinct path: LMC 2 routing did not spread")
			}
			// The text form: the set's line, then one line per LID offset.
			for lid, desc := range lids {
				if desc != "H1-1" {
					continue
				}
				out, errOut, code := runCLI(t, fab, tc.sources[0], "--lmc-all", "--no-validate", "-l", strconv.Itoa(int(lid)))
				lines := strings.Split(strings.TrimSpace(out), "\n")
				head := regexp.MustCompile(fmt.Sprintf(`^lid %d: lid %d-%d \(LMC 2\): 4 path\(s\) traced, 4 reached, [1-4] distinct, [1-9]\d* shared hop\(s\) \[.*"?H1-1"?.*\]$`, lid, lid, lid+3))
				if code != 0 || len(lines) != 5 || !head.MatchString(lines[0]) {
					t.Fatalf("--lmc-all text: exit %d %s\n%s", code, errOut, out)
				}
				for i, l := range lines[1:] {
					if !strings.HasPrefix(l, fmt.Sprintf("  +%d lid %d: ok: ", i, int(lid)+i)) {
						t.Fatalf("--lmc-all text line %d: %q", i+1, l)
					}
				}
			}
			t.Logf("%s: %d paths compared, %d path sets with several distinct paths", tc.file, total, multi)
		})
	}
}
