package trace

import (
	"errors"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

func TestNodeLabel(t *testing.T) {
	for _, tc := range []struct {
		name, desc string
		guid       ibmad.GUID
		want       string
	}{
		{"leaf01", "MT4123 switch", 0x20, "leaf01 {0x0000000000000020}"},
		{"", "L1", 0x20, "L1 {0x0000000000000020}"},
		{"", "db01 HCA-1", 0x30, `"db01 HCA-1" {0x0000000000000030}`},
		{"", "", 0x30, "{0x0000000000000030}"},
		{"", "a\"b", 0x30, `"a\"b" {0x0000000000000030}`},
	} {
		if got := NodeLabel(tc.name, tc.desc, tc.guid); got != tc.want {
			t.Errorf("NodeLabel(%q, %q): %s, want %s", tc.name, tc.desc, got, tc.want)
		}
	}
}

// A name is a node-name-map name or a node description; a name two nodes
// share is an error that lists both; a GUID needs no record.
func TestNodesLookup(t *testing.T) {
	var ns Nodes
	ns.AddMap(map[uint64]string{0x20: "leaf01"})
	ns.AddHops(viaResult(StatusOK), nil, &Result{Hops: []Hop{{NodeGUID: 0x20, NodeDesc: "L1"}, {NodeGUID: 0x21, NodeDesc: "S"}}})
	for in, want := range map[string]ibmad.GUID{"leaf01": 0x20, "L1": 0x20, "T": 0x7, "0x99": 0x99, "0X7": 7} {
		if g, err := ns.Lookup(in); err != nil || g != want {
			t.Errorf("%q: %v %v, want %v", in, g, err, want)
		}
	}
	_, err := ns.Lookup("S")
	var amb *AmbiguousError
	if !errors.As(err, &amb) || len(amb.Nodes) != 2 || err.Error() != `the name "S" matches 2 nodes: S {0x0000000000000005}, S {0x0000000000000021}; give one by its node GUID` {
		t.Errorf("S: %v, want an ambiguity listing both nodes", err)
	}
	_, err = ns.Lookup("nope")
	var unk *UnknownNameError
	if !errors.As(err, &unk) || !strings.Contains(err.Error(), `no node is named "nope"`) {
		t.Errorf("nope: %v", err)
	}
	if _, err = ns.Lookup("20"); err == nil || !strings.Contains(err.Error(), "written with 0x") {
		t.Errorf("20: %v, want a hint about 0x", err)
	}
	// The listing and the echo are bounded.
	var many Nodes
	for g := ibmad.GUID(1); g <= 40; g++ {
		many.Add(g, "", "dup")
	}
	_, err = many.Lookup("dup")
	if err == nil || !strings.Contains(err.Error(), "matches 40 nodes") || !strings.Contains(err.Error(), "and 30 more") || strings.Contains(err.Error(), "0x0000000000000011") {
		t.Errorf("40 nodes: %v", err)
	}
	_, err = many.Lookup(strings.Repeat("x", 5000))
	if err == nil || len(err.Error()) > 300 {
		t.Errorf("a 5000-byte name: an error of %d bytes", len(err.Error()))
	}
}

func TestParseLinkRef(t *testing.T) {
	for in, want := range map[string]LinkRef{
		"L1:5":                 {"L1", 5},
		"0x0002c90300a1b2c3:4": {"0x0002c90300a1b2c3", 4},
		"rack:12 leaf:254":     {"rack:12 leaf", 254},
		"db01 HCA-1:1":         {"db01 HCA-1", 1},
	} {
		got, err := ParseLinkRef(in)
		if err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	for in, says := range map[string]string{
		"":        "want NODE:PORT",
		"L1":      "want NODE:PORT",
		":4":      "no node",
		"0x:4":    "node GUID",
		"0x0:4":   "node GUID",
		"0xg:4":   "node GUID",
		"0x1:2:3": "node GUID",
		"L1:0":    "port",
		"L1:255":  "port",
		"L1:04":   "port",
		"L1:":     "port",
	} {
		if _, err := ParseLinkRef(in); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("%q: error %v, want one saying %q", in, err, says)
		}
	}
	var ns Nodes
	ns.AddHops(viaResult(StatusOK))
	r, _ := ParseLinkRef("S:7")
	if l, err := r.Resolve(&ns); err != nil || l != (LinkPort{0x5, 7}) {
		t.Errorf("S:7: %v %v", l, err)
	}
}

// A crossing names its ends by site name when the hops were named.
func TestCrossingNamesEnds(t *testing.T) {
	r := viaResult(StatusOK)
	names := map[uint64]string{0x5: "spine01"}
	NameHops(func(g uint64) string { return names[g] }, r)
	if c, ok := r.Crosses(LinkPort{0x5, 7}); !ok || c.String() != `hop 2, "spine01" {0x0000000000000005}[7] -> "T" {0x0000000000000007}[2]` {
		t.Errorf("%v %v", c, ok)
	}
}

// A mismatch's summary names the hop by its site name once named.
func TestMismatchSummaryNamesHop(t *testing.T) {
	r := viaResult(StatusMismatch)
	r.Destination = Destination{LID: 9}
	r.Hops[2].Agent, r.Hops[2].ActualInPort, r.Hops[2].ExpectedInPort = AgentMismatch, 3, 2
	NameHops(func(g uint64) string { return map[uint64]string{0x7: "spine07"}[g] }, r)
	if s := r.Summary(); !strings.Contains(s, `hop 2 switch "spine07" (0x0000000000000007) arrived on port 3`) && !strings.Contains(s, `"spine07" (0x0000000000000007) arrived on port 3`) {
		t.Errorf("summary %q: want the hop by its site name", s)
	}
}
