package trace

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

func TestParseLinkPort(t *testing.T) {
	for in, want := range map[string]LinkPort{
		"0x0002c90300a1b2c3:4":  {0x0002c90300a1b2c3, 4},
		"0X2C90300A1B2C3:254":   {0x0002c90300a1b2c3, 254},
		"0x1:1":                 {1, 1},
		"0xffffffffffffffff:17": {0xffffffffffffffff, 17},
	} {
		got, err := ParseLinkPort(in)
		if err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
		if back, err := ParseLinkPort(got.String()); err != nil || back != got {
			t.Errorf("%q: String %q reads back as %v %v", in, got.String(), back, err)
		}
	}
	for in, says := range map[string]string{
		"":                      "want NODE_GUID:PORT",
		"0x0002c90300a1b2c3":    "want NODE_GUID:PORT",
		"0x1:2:3":               "want NODE_GUID:PORT",
		"0002c90300a1b2c3:4":    "node GUID",
		"0x:4":                  "node GUID",
		"0x0:4":                 "node GUID",
		"0xg:4":                 "node GUID",
		"0x10000000000000000:4": "node GUID",
		"0x1:0":                 "port",
		"0x1:255":               "port",
		"0x1:":                  "port",
		"0x1:+4":                "port",
		"0x1:04":                "port",
		"0x1:0x4":               "port",
	} {
		if _, err := ParseLinkPort(in); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("%q: error %v, want one saying %q", in, err, says)
		}
	}
}

// viaResult is host A (port 1) -> switch S (in 3, out 7) -> switch T (in
// 2, out 5) -> host B (port 1).
func viaResult(st Status) *Result {
	return &Result{Status: st, Hops: []Hop{
		{Hop: 0, NodeGUID: 0xa, NodeDesc: "A", OutPort: 1},
		{Hop: 1, NodeGUID: 0x5, NodeDesc: "S", InPort: 3, OutPort: 7},
		{Hop: 2, NodeGUID: 0x7, NodeDesc: "T", InPort: 2, OutPort: 5},
		{Hop: 3, NodeGUID: 0xb, NodeDesc: "B", InPort: 1},
	}}
}

func TestCrosses(t *testing.T) {
	r := viaResult(StatusOK)
	for _, tc := range []struct {
		l   LinkPort
		hop int
	}{
		{LinkPort{0xa, 1}, 1}, {LinkPort{0x5, 3}, 1}, // the first link, by either end
		{LinkPort{0x5, 7}, 2}, {LinkPort{0x7, 2}, 2},
		{LinkPort{0x7, 5}, 3}, {LinkPort{0xb, 1}, 3},
	} {
		c, ok := r.Crosses(tc.l)
		if !ok || c.Hop != tc.hop || !c.Far || c.From.NodeGUID != r.Hops[tc.hop-1].NodeGUID || c.To.NodeGUID != r.Hops[tc.hop].NodeGUID ||
			c.From.Port != r.Hops[tc.hop-1].OutPort || c.To.Port != r.Hops[tc.hop].InPort {
			t.Errorf("%v: %+v %v, want hop %d", tc.l, c, ok, tc.hop)
		}
	}
	// Another port of a node on the path, and a node not on it.
	for _, l := range []LinkPort{{0x5, 2}, {0x7, 7}, {0xa, 2}, {0xc, 1}, {0x5, 0}} {
		if c, ok := r.Crosses(l); ok {
			t.Errorf("%v: crosses at %+v", l, c)
		}
	}
	// The text form names both ends.
	if c, ok := r.Crosses(LinkPort{0x5, 7}); !ok || c.String() != `hop 2, "S" {0x0000000000000005}[7] -> "T" {0x0000000000000007}[2]` {
		t.Errorf("String: %q", c.String())
	}
}

func TestCrossesFailedTrace(t *testing.T) {
	r := viaResult(StatusUnreachable)
	r.Hops = r.Hops[:2] // stopped at S, leaving by port 7 (a dead link)
	c, ok := r.Crosses(LinkPort{0x5, 7})
	if !ok || c.Hop != 2 || c.Far || c.From.NodeGUID != 0x5 || c.From.Port != 7 {
		t.Fatalf("dead link's near end: %+v %v", c, ok)
	}
	if !strings.HasSuffix(c.String(), "(not reached)") {
		t.Fatalf("String: %q", c.String())
	}
	// Its far end was never seen: the trace cannot tell.
	if c, ok := r.Crosses(LinkPort{0x7, 2}); ok {
		t.Fatalf("far end of an unreached link: %+v", c)
	}
	// An ok trace's last hop leaving by a port is no crossing (it is the destination; OutPort is 0 there anyway).
	ok2 := viaResult(StatusOK)
	ok2.Hops[3].OutPort = 9
	if c, ok := ok2.Crosses(LinkPort{0xb, 9}); ok {
		t.Fatalf("ok trace, destination's port 9: %+v", c)
	}
	var empty Result
	if _, ok := empty.Crosses(LinkPort{0x5, 7}); ok {
		t.Fatal("a trace without hops crosses a link")
	}
}

// ParseLinkPort reads a link end written as GUID:PORT only:
// 0xGUID:PORT, the node GUID in hex with its 0x prefix (as ibtracer's
// reports and the metrics' node_guid write it) and the port in decimal,
// 1..254 (port 0 of a switch is no link). Anything else is an error
// saying what is wrong.
func ParseLinkPort(s string) (LinkPort, error) {
	g, p, ok := strings.Cut(s, ":")
	if !ok || strings.Contains(p, ":") {
		return LinkPort{}, fmt.Errorf("%q: want NODE_GUID:PORT, such as 0x0002c90300a1b2c3:4", s)
	}
	digits, hex := strings.CutPrefix(strings.ToLower(g), "0x")
	v, err := strconv.ParseUint(digits, 16, 64)
	if !hex || digits == "" || len(digits) > 16 || err != nil || v == 0 {
		return LinkPort{}, fmt.Errorf("%q: the node GUID %q is not 1..16 hex digits after 0x, not all zero", s, g)
	}
	n, err := strconv.ParseUint(p, 10, 8)
	if err != nil || n < 1 || n > 254 || p != strconv.FormatUint(n, 10) {
		return LinkPort{}, fmt.Errorf("%q: the port %q is not a port number 1..254", s, p)
	}
	return LinkPort{NodeGUID: ibmad.GUID(v), Port: uint8(n)}, nil
}
