package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

var (
	mcFromRe = regexp.MustCompile(`^From (\S+) 0x([0-9a-f]+) port (\d+) lid (\d+)-(\d+) "(.*)"$`)
	mcHopRe  = regexp.MustCompile(`^\[(\d+)\] -> (\S+) 0x([0-9a-f]+)\[(\d+)\] lid (\d+) "(.*)"$`)
	mcToRe   = regexp.MustCompile(`^To (\S+) 0x([0-9a-f]+) port (\d+) lid (\d+)-(\d+) "(.*)"$`)
)

// compareWithIbtracertM checks our JSON hops against ibtracert -m's
// lines: From (node GUID), each [out] -> type guid[in] lid, To.
func compareWithIbtracertM(ours trace.JSONResult, out string) error {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	hops := ours.Hops
	if len(lines) != len(hops)+1 {
		return fmt.Errorf("ibtracert -m prints %d lines, we have %d hops (want hops+1)", len(lines), len(hops))
	}
	m := mcFromRe.FindStringSubmatch(lines[0])
	if m == nil || hexGUID(m[2]) != hops[0].NodeGUID || m[1] != hops[0].NodeType {
		return fmt.Errorf("From line %q, our source %s %s", lines[0], hops[0].NodeType, hops[0].NodeGUID)
	}
	for i := 1; i < len(hops); i++ {
		m := mcHopRe.FindStringSubmatch(lines[i])
		h := hops[i]
		if m == nil {
			return fmt.Errorf("line %d %q is not a hop line", i, lines[i])
		}
		got := fmt.Sprintf("[%d] -> %s %s[%d] lid %d", hops[i-1].OutPort, h.NodeType, h.NodeGUID, h.InPort, h.LID)
		want := fmt.Sprintf("[%s] -> %s %s[%s] lid %s", m[1], m[2], hexGUID(m[3]), m[4], m[5])
		if got != want {
			return fmt.Errorf("hop %d: ours %q, ibtracert -m %q", i, got, want)
		}
	}
	last := hops[len(hops)-1]
	m = mcToRe.FindStringSubmatch(lines[len(lines)-1])
	if m == nil || hexGUID(m[2]) != last.NodeGUID || m[4] != strconv.Itoa(int(last.LID)) {
		return fmt.Errorf("To line %q, our last hop %s lid %d", lines[len(lines)-1], last.NodeGUID, last.LID)
	}
	return nil
}

// ibtracertM runs ibtracert -m at here; OpenSM programs the MFTs of a new
// group on its next pass, so a failure is asked again until it succeeds
// or 20 s have passed (want false: until the deadline, and the last
// answer is returned).
func ibtracertM(t *testing.T, fab *ibsimtest.Fabric, here string, mlid, src, dst uint16) (string, error) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, err := fab.Tool(here, "ibtracert", "-m", fmt.Sprintf("0x%04x", mlid), strconv.Itoa(int(src)), strconv.Itoa(int(dst)))
		if err == nil || time.Now().After(deadline) {
			return out, err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestMulticastEqualsIbtracertM is the multicast oracle: two groups are
// joined with SA MCMemberRecord Sets from several ibsim clients, OpenSM
// programs the MFTs, and for every ordered (source, destination) pair of
// members of each group our -m path equals stock `ibtracert -m MLID SRC
// DST`, run on the same node; every hop after the source is not_asked.
func TestMulticastEqualsIbtracertM(t *testing.T) {
	ibsimtest.Require(t)
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "fattree-mini.net"), ibsimtest.Options{KeepSM: true, SMHost: true})
	lidOf := map[string]uint16{}
	for lid, desc := range allLIDs(t, fab, "H0-1") {
		lidOf[desc] = lid
	}
	groups := [][]string{{"H0-0", "H0-1", "H1-0"}, {"H0-2", "H1-1", "H1-2", "H0-0"}}
	const here = "H0-1"
	pairs, bothFail := 0, 0
	for g, members := range groups {
		mlid, err := fab.Join(ibsimtest.MGID(uint16(g+1)), members...)
		if err != nil {
			t.Fatal(err)
		}
		// Every member as source (MFTs are waited for here), then the
		// switches, whose From line ibtracert prints with the port the walk
		// to them entered by; a switch off the group's tree has no route
		// in either tool.
		for _, s := range append(append([]string(nil), members...), "L0", "S1", "L1") {
			for _, d := range members {
				if s == d {
					continue
				}
				if checkMulticastPair(t, fab, here, mlid, s, d, lidOf[s], lidOf[d], !strings.HasPrefix(s, "H")) {
					pairs++
				} else {
					bothFail++
				}
			}
		}
	}
	if bothFail == 0 || bothFail > pairs {
		t.Errorf("%d paths equal, %d pairs without a route in both tools: the switch sources prove too little", pairs, bothFail)
	}
	t.Logf("%d multicast paths equal to ibtracert -m's; %d switch-source pairs without a route in both", pairs, bothFail)

	// H1-2 is not a member of the first group: both tools find no route,
	// and ours names the switch whose MFT entry has no port toward it.
	src, dst := lidOf["H0-0"], lidOf["H1-2"]
	if out, err := fab.Tool(here, "ibtracert", "-m", "0xc001", strconv.Itoa(int(src)), strconv.Itoa(int(dst))); err == nil {
		t.Fatalf("ibtracert -m 0xc001 to a non-member succeeded:\n%s", out)
	}
	out, errOut, code := runCLI(t, fab, here, "--format=json", "-m", "0xc001", strconv.Itoa(int(src)), strconv.Itoa(int(dst)))
	var rs []trace.JSONResult
	if err := json.Unmarshal([]byte(out), &rs); err != nil || code != exitUnreachable || len(rs) != 1 {
		t.Fatalf("-m 0xc001 to a non-member: exit %d %v\n%s%s", code, err, out, errOut)
	}
	vo, _, _ := runCLI(t, fab, here, "-v", "-m", "0xc001", strconv.Itoa(int(src)), strconv.Itoa(int(dst)))
	t.Logf("ours -v to a non-member:\n%s", vo)
	r := rs[0]
	last := r.Hops[len(r.Hops)-1]
	if r.Reason != "no_route" || last.NodeDesc != "L1" || !strings.Contains(r.Error, `"L1"`) || !strings.Contains(r.Error, "port 3") {
		t.Errorf("-m 0xc001 H0-0 -> H1-2: reason %q, last hop %q, error %q; want no_route at L1 naming port 3 toward H1-2", r.Reason, last.NodeDesc, r.Error)
	}
}

// sameTextAsIbtracertM checks that our -v form prints ibtracert -m's
// lines, each followed only by the hop's verdict.
func sameTextAsIbtracertM(t *testing.T, fab *ibsimtest.Fabric, here string, mlid, src, dst uint16, want string) error {
	out, errOut, code := runCLI(t, fab, here, "-v", "-m", fmt.Sprintf("0x%04x", mlid), strconv.Itoa(int(src)), strconv.Itoa(int(dst)))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	wants := strings.Split(strings.TrimSpace(want), "\n")
	if code != 0 || len(lines) != len(wants)+2 {
		return fmt.Errorf("exit %d, %d lines for ibtracert's %d (+ summary and note):\n%s%s", code, len(lines), len(wants), out, errOut)
	}
	for i, w := range wants {
		got := strings.TrimSuffix(lines[i+2], " agent not_asked")
		if got != w {
			return fmt.Errorf("line %d: ours %q, ibtracert -m %q", i, lines[i+2], w)
		}
	}
	return nil
}

// checkMulticastPair compares one -m trace with ibtracert -m's; found is
// false when neither tool finds a route (allowed only when maybeNone: a
// switch source that may be off the group's tree).
func checkMulticastPair(t *testing.T, fab *ibsimtest.Fabric, here string, mlid uint16, s, d string, src, dst uint16, maybeNone bool) (found bool) {
	t.Helper()
	var want string
	var err error
	if maybeNone {
		want, err = fab.Tool(here, "ibtracert", "-m", fmt.Sprintf("0x%04x", mlid), strconv.Itoa(int(src)), strconv.Itoa(int(dst)))
	} else {
		want, err = ibtracertM(t, fab, here, mlid, src, dst)
	}
	out, errOut, code := runCLI(t, fab, here, "--format=json", "-m", fmt.Sprintf("0x%04x", mlid),
		strconv.Itoa(int(src)), strconv.Itoa(int(dst)))
	var rs []trace.JSONResult
	if jerr := json.Unmarshal([]byte(out), &rs); jerr != nil || len(rs) != 1 {
		t.Fatalf("-m 0x%04x %s -> %s: exit %d %v\n%s%s", mlid, s, d, code, jerr, out, errOut)
	}
	if err != nil {
		if !maybeNone || code != exitUnreachable || rs[0].Reason != "no_route" {
			t.Fatalf("ibtracert -m 0x%04x %s -> %s: %v\n%s\nours: exit %d, %s", mlid, s, d, err, want, code, rs[0].Error)
		}
		return false
	}
	if code != 0 {
		t.Fatalf("-m 0x%04x %s -> %s: exit %d\n%s%s", mlid, s, d, code, out, errOut)
	}
	if err := compareWithIbtracertM(rs[0], want); err != nil {
		t.Fatalf("-m 0x%04x %s -> %s: %v\nibtracert -m:\n%s\nours:\n%s", mlid, s, d, err, want, out)
	}
	for _, h := range rs[0].Hops[1:] {
		if h.Verdict != "not_asked" || h.ValidatedBy != "" {
			t.Fatalf("-m %s -> %s: hop %d verdict %q by %q, want not_asked by nobody", s, d, h.Hop, h.Verdict, h.ValidatedBy)
		}
	}
	if rs[0].MLID != fmt.Sprintf("0x%04x", mlid) || rs[0].ValidationNote != trace.MulticastNote {
		t.Fatalf("-m %s -> %s: mlid %q, note %q", s, d, rs[0].MLID, rs[0].ValidationNote)
	}
	if err := sameTextAsIbtracertM(t, fab, here, mlid, src, dst, want); err != nil {
		t.Fatalf("-v -m 0x%04x %s -> %s: %v", mlid, s, d, err)
	}
	return true
}
