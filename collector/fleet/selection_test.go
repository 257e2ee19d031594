package fleet

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/collector/config"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/internal/nodenamemap"
)

func caPort(guid uint64, port uint8, lid uint16, desc string) InventoryPort {
	return InventoryPort{NodeGUID: guid, PortGUID: guid + uint64(port), LID: lid, Port: port, NodeType: ibmad.NodeTypeCA, NodeDesc: desc}
}

func testInventory() []InventoryPort {
	return []InventoryPort{
		caPort(0x100, 1, 10, "db01 HCA-1"),
		caPort(0x200, 1, 11, "db02 HCA-1"),
		caPort(0x300, 1, 12, "web01 HCA-1"),
		caPort(0x300, 2, 13, "web01 HCA-1"),
		caPort(0x400, 1, 0, "down01 HCA-1"), // no LID: not active
		{NodeGUID: 0x900, PortGUID: 0x900, LID: 1, Port: 0, NodeType: ibmad.NodeTypeSwitch, NodeDesc: "leaf01"},
		{NodeGUID: 0x900, PortGUID: 0x900, LID: 1, Port: 3, NodeType: ibmad.NodeTypeSwitch, NodeDesc: "leaf01"},
	}
}

func names(ds []config.Destination) []string {
	var out []string
	for _, d := range ds {
		out = append(out, fmt.Sprintf("%s=%d", d.Name, d.LID))
	}
	sort.Strings(out)
	return out
}

func TestSelectorsMatch(t *testing.T) {
	inv := testInventory()
	site := nodenamemap.Map{0x300: "rack1-web"}
	for _, tc := range []struct {
		sel  config.Selector
		self uint64
		want string
	}{
		{config.Selector{All: true}, 0, "db01 HCA-1/1=10 db02 HCA-1/1=11 rack1-web/1=12 rack1-web/2=13"},
		{config.Selector{All: true}, 0x101, "db02 HCA-1/1=11 rack1-web/1=12 rack1-web/2=13"}, // not itself
		{config.Selector{NodeType: "ca"}, 0, "db01 HCA-1/1=10 db02 HCA-1/1=11 rack1-web/1=12 rack1-web/2=13"},
		{config.Selector{NodeType: "switch"}, 0, "leaf01=1"},
		{config.Selector{NodeDesc: "^db", Regexp: regexp.MustCompile("^db")}, 0, "db01 HCA-1/1=10 db02 HCA-1/1=11"},
		{config.Selector{NodeNames: []string{"rack1-web"}, GUIDs: map[uint64]bool{0x300: true}}, 0, "rack1-web/1=12 rack1-web/2=13"},
	} {
		got := strings.Join(names(Destinations(&tc.sel, MatchPorts(&tc.sel, inv, tc.self), site)), " ")
		if got != tc.want {
			t.Errorf("%+v: got %s, want %s", tc.sel, got, tc.want)
		}
	}
	// A node-name-map name alone names a node with one port; two ports
	// with one description get their port GUIDs.
	one := []InventoryPort{caPort(0x300, 1, 12, "x")}
	sel := config.Selector{All: true}
	if got := names(Destinations(&sel, MatchPorts(&sel, one, 0), site)); got[0] != "rack1-web=12" {
		t.Errorf("got %v", got)
	}
	twins := []InventoryPort{caPort(0x500, 1, 20, "same"), caPort(0x600, 1, 21, "same")}
	got := names(Destinations(&sel, MatchPorts(&sel, twins, 0), nil))
	if strings.Join(got, " ") != "same/1@0x0000000000000501=20 same/1@0x0000000000000601=21" {
		t.Errorf("got %v", got)
	}
	// Discovered destinations carry the selector's hops setting (false
	// by default) and labels.
	sel.Labels = map[string]string{"pool": "x"}
	d := Destinations(&sel, MatchPorts(&sel, one, 0), nil)[0]
	if d.HopSeries() || d.Labels["pool"] != "x" {
		t.Errorf("%+v", d)
	}
}

// The sample depends on the exporter (seed) and the time, has the asked
// size, changes one destination at a time, spread over the rotation
// period, is drawn afresh every period, and covers every destination
// over the periods.
func TestSampleDestinations(t *testing.T) {
	var all []config.Destination
	for i := 0; i < 200; i++ {
		all = append(all, config.Destination{Name: fmt.Sprintf("d%03d", i), LID: uint16(i + 1)})
	}
	now := time.Unix(1800000000, 0)
	const rotate = time.Hour
	at := func(seed string, t time.Time) []string { return names(Sample(all, 10, seed, 0, t, rotate)) }
	a := at("0x01", now)
	if len(a) != 10 {
		t.Fatalf("%d chosen", len(a))
	}
	if b := at("0x01", now); strings.Join(a, ",") != strings.Join(b, ",") {
		t.Fatal("the same seed and time chose differently")
	}
	if b := at("0x02", now); strings.Join(a, ",") == strings.Join(b, ",") {
		t.Fatal("two exporters chose the same sample")
	}
	if n := len(Sample(all, 0, "0x01", 0, now, rotate)); n != 200 {
		t.Fatalf("sample 0: %d, want all", n)
	}
	// Over one period, minute by minute: the sample never changes by more
	// than a few destinations at once, and after the period little of
	// the first sample is left.
	prev := a
	for m := 1; m <= 60; m++ {
		cur := at("0x01", now.Add(time.Duration(m)*time.Minute))
		if d := 10 - overlap(prev, cur); d > 3 {
			t.Fatalf("minute %d: %d of 10 destinations replaced at once", m, d)
		}
		prev = cur
	}
	if o := overlap(a, prev); o > 4 {
		t.Fatalf("after one period %d of 10 destinations are the same", o)
	}
	// 60 periods: one exporter alone sees nearly every destination.
	seen := map[string]bool{}
	for p := 0; p < 60; p++ {
		for _, n := range at("0x01", now.Add(time.Duration(p)*rotate)) {
			seen[n] = true
		}
	}
	if len(seen) < 190 {
		t.Fatalf("60 periods of 10 of 200 covered %d", len(seen))
	}
}

func overlap(a, b []string) int {
	in := map[string]bool{}
	for _, x := range a {
		in[x] = true
	}
	n := 0
	for _, x := range b {
		if in[x] {
			n++
		}
	}
	return n
}
