package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
)

var nodeGUIDRe = regexp.MustCompile(`(?m)^Guid:\.*(0x[0-9a-f]+)$`)

// ibtracertLinks runs stock ibtracert on node src to dlid and returns
// the links its route crosses (inner: those between two switches), each as both ends "0xNODEGUID:PORT" →
// the hop it enters (its route line's number). A hop line names a node
// by its port GUID; a switch's node GUID is read with stock smpquery
// NodeInfo at the LID the line gives (nodeOf caches it), a CA's from the
// To line. descOf gets each node's description as ibtracert quotes it,
// by node GUID.
func ibtracertLinks(t *testing.T, fab *ibsimtest.Fabric, src string, slid, dlid uint16, nodeOf map[uint16]string, descOf map[string]string) (links map[string]int, inner map[string]bool) {
	t.Helper()
	out, err := fab.Tool(src, "ibtracert", strconv.Itoa(int(slid)), strconv.Itoa(int(dlid)))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	from, to := fromRe.FindStringSubmatch(lines[0]), toRe.FindStringSubmatch(lines[len(lines)-1])
	if from == nil || to == nil || len(lines) < 3 {
		t.Fatalf("ibtracert %d printed %q", dlid, out)
	}
	links, inner = map[string]int{}, map[string]bool{}
	near := hexGUID(from[2])
	descOf[near] = from[6]
	for k, line := range lines[1 : len(lines)-1] {
		m := hopRe.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("ibtracert %d: route line %q", dlid, line)
		}
		far := hexGUID(to[2])
		if k < len(lines)-3 {
			lid, _ := strconv.Atoi(m[5])
			if nodeOf[uint16(lid)] == "" {
				ni, err := fab.Tool(src, "smpquery", "nodeinfo", m[5])
				g := nodeGUIDRe.FindStringSubmatch(ni)
				if err != nil || g == nil {
					t.Fatalf("smpquery nodeinfo %s: %v %q", m[5], err, ni)
				}
				nodeOf[uint16(lid)] = hexGUID(strings.TrimPrefix(g[1], "0x"))
			}
			far = nodeOf[uint16(lid)]
		}
		descOf[far] = m[7]
		links[near+":"+m[1]] = k + 1
		links[far+":"+m[4]] = k + 1
		if k > 0 && k < len(lines)-3 { // switch to switch
			inner[near+":"+m[1]], inner[far+":"+m[4]] = true, true
		}
		near = far
	}
	return links, inner
}

// TestViaEqualsIbtracertOnIbsim is --via's oracle: on ibsim under
// OpenSM (the 4x2x4 fat tree, OpenSM on a host of its own), for every link end stock ibtracert's
// routes from H0-0 cross, the destinations `ibtracer --via END` lists,
// and the hop where, are those whose ibtracert route crosses that link,
// found by running ibtracert for every CA LID.
func TestViaEqualsIbtracertOnIbsim(t *testing.T) {
	ibsimtest.Require(t)
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "fattree-4x2x4.net"), ibsimtest.Options{KeepSM: true, SMHost: true}) // --all asks the SA
	const src = "H0-0"
	lids := allLIDs(t, fab, src)
	var slid, dst uint16
	for lid, desc := range lids {
		switch desc {
		case src:
			slid = lid
		case "H3-3":
			dst = lid
		}
	}
	want := map[string]map[uint16]int{} // link end -> DLID -> hop
	nodeOf, descOf := map[uint16]string{}, map[string]string{}
	cas := 0
	var check []string // every switch-to-switch link end, the source's link and H3-3's (both ends)
	for lid, desc := range lids {
		if !strings.HasPrefix(desc, "H") && desc != ibsimtest.SMHostName || desc == src {
			continue
		}
		cas++
		links, inner := ibtracertLinks(t, fab, src, slid, lid, nodeOf, descOf)
		for end, hop := range links {
			if want[end] == nil && (inner[end] || hop == 1 || lid == dst) {
				check = append(check, end)
			}
			if want[end] == nil {
				want[end] = map[uint16]int{}
			}
			want[end][lid] = hop
		}
	}
	sort.Strings(check)
	compared, sizes := 0, map[int]int{}
	for _, end := range check {
		v, got := viaOnIbsim(t, fab, src, end)
		if v.Traced != cas || len(v.Undetermined) != 0 || fmt.Sprint(got) != fmt.Sprint(want[end]) {
			t.Fatalf("--via %s: traced %d (%d undetermined), DLID->hop %v; ibtracert's routes: %v", end, v.Traced, len(v.Undetermined), got, want[end])
		}
		compared++
		sizes[len(got)]++
	}
	if compared < 10 {
		t.Fatalf("%d link ends compared", compared)
	}
	// The same link ends by the node's description, as ibtracert quotes
	// it (the SMA's NodeDescription): the same destinations and hops.
	byName := 0
	for _, end := range check {
		g, port, _ := strings.Cut(end, ":")
		if desc := descOf[g]; strings.HasPrefix(desc, "S") && byName < 3 {
			named := desc + ":" + port
			v, got := viaOnIbsim(t, fab, src, named)
			if v.Link != end || fmt.Sprint(got) != fmt.Sprint(want[end]) {
				t.Fatalf("--via %s: link %s, DLID->hop %v; ibtracert's routes over %s: %v", named, v.Link, got, end, want[end])
			}
			byName++
		}
	}
	if byName == 0 {
		t.Fatalf("no spine link end compared by name; descriptions %v", descOf)
	}
	t.Logf("%d link ends of %d seen (%d also by name): --via's destinations and hops == ibtracert's routes over %d CA LIDs; blast radius size -> link ends: %v",
		compared, len(want), byName, cas, sizes)
}

// viaOnIbsim runs `ibtracer --via end` from src as JSON, and returns it
// with the hop of each DLID that crosses the link end.
func viaOnIbsim(t *testing.T, fab *ibsimtest.Fabric, src, end string) (jsonVia, map[uint16]int) {
	t.Helper()
	out, errOut, code := runCLI(t, fab, src, "--validate=off", "--format=json", "--via", end)
	var v jsonVia
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != 0 {
		t.Fatalf("--via %s: exit %d %v\n%s%s", end, code, err, out, errOut)
	}
	got := map[uint16]int{}
	for _, c := range v.Crossing {
		got[c.DLID] = c.Hop
	}
	return v, got
}
