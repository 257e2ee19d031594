package collector

import (
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/localize"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

const leftYAML = "share_validation: 0s\ntimeout: 20ms\nretries: 1\n"

// leftDown is e's ibtracer_link_left_down: link to value.
func leftDown(t *testing.T, e *Exporter) map[localize.Link]float64 {
	t.Helper()
	links, _ := linkSeries(t, e)
	return links["ibtracer_link_left_down"]
}

// leftExporter is an exporter on the 2-leaf, 2-spine fat tree, every
// destination traced once on a healthy fabric (no left_down series), its
// logs in the returned buffer; and the spine link (spine, port) toward
// leaf L1 that a destination's path crosses, with the destinations whose
// paths cross it.
// moveOffSpine points the first leaf of path old at lid out of its
// uplink to another spine than spine, as an SM re-balancing would: the
// path moves while every link of the old one stays Active.
func moveOffSpine(t *testing.T, f *sim.Fabric, old *trace.Result, lid uint16, spine string) {
	t.Helper()
	leaf := f.NodeByGUID(old.Hops[1].NodeGUID)
	var other uint8
	for _, p := range leaf.Ports {
		if p != nil && p.Remote != nil && p.Remote.Node.IsSwitch() && p.Remote.Node.Name != spine {
			other = p.Num
		}
	}
	if err := f.SetLFTEntry(leaf.Name, lid, other); err != nil {
		t.Fatal(err)
	}
}

func leftExporter(t *testing.T) (e *Exporter, f *sim.Fabric, dests []string, spine string, port int, crossing []string, buf *logBuffer) {
	t.Helper()
	e, f, dests = fatTreeExporter(t, leftYAML, 1)
	e.Stop() // traced by hand only
	buf = &logBuffer{}
	e.logger = log.NewLogfmtLogger(buf)
	e.traceAll(t, dests)
	if l, plain := linkSeries(t, e); len(l["ibtracer_link_left_down"]) != 0 {
		t.Fatalf("healthy fabric: link_left_down %v", l["ibtracer_link_left_down"])
	} else if _, ok := plain["ibtracer_link_left_down_forgotten_total"]; ok {
		t.Fatal("healthy fabric: a forgotten counter")
	}
	spine, port, _ = spineDown(t, e, f, dests)
	link := simLink(t, f, spine, port)
	for _, n := range dests {
		if crossedLinks(e.dests.get(n).last)[link] {
			crossing = append(crossing, n)
		}
	}
	buf.take(t)
	return e, f, dests, spine, port, crossing, buf
}

// TestLinkLeftDown: a spine–leaf cable that paths cross goes down and
// the SM routes around it: after the next trace link_left_down of that
// link counts the destinations whose paths left it, link_info names both
// ends, and one warning per destination names the cable; the other link
// of the old path, still Active, has no series. While it stays down each
// trace reads it once more (one SMP, counted in the destination's trace
// MADs) and keeps it.
func TestLinkLeftDown(t *testing.T) {
	e, f, dests, spine, port, crossing, buf := leftExporter(t)
	link := simLink(t, f, spine, port)
	if err := f.SetLinkState(spine, port, false, true); err != nil {
		t.Fatal(err)
	}
	e.traceAll(t, dests)
	got := leftDown(t, e)
	if len(got) != 1 || got[link] != float64(len(crossing)) {
		t.Fatalf("link_left_down %v, want {%v: %d}", got, link, len(crossing))
	}
	if _, plain := linkSeries(t, e); plain["ibtracer_link_left_down_forgotten_total"] != 0 {
		t.Fatalf("forgotten %v, want 0", plain)
	}
	wantDescs(t, f, linkInfo(t, e), got, nil)
	w := withMsg(buf.take(t), "path left a link that is down")
	if len(w) != len(crossing) || !strings.HasPrefix(w[0]["link"], spine+" ") || w[0]["port_state"] != "Down" {
		t.Fatalf("warnings %v, want %d naming %s", w, len(crossing), spine)
	}
	// The labels and descriptions of the line are the link's, in its order.
	if w[0]["node_guid"] != link.NodeGUID.String() || w[0]["node_desc"] != f.NodeByGUID(link.NodeGUID).Desc ||
		w[0]["remote_node_desc"] != f.NodeByGUID(link.RemoteNodeGUID).Desc {
		t.Fatalf("warning %v: ends out of the link's order %v", w[0], link)
	}
	s := e.dests.get(crossing[0])
	before := s.mads
	e.traceEach(crossing[:1])
	if d, r := s.mads-before, uint64(s.last.MADs); d != r+1 {
		t.Fatalf("a trace with one left link down spent %d MADs, its trace %d: want one more", d, r)
	}
	if got := leftDown(t, e); got[link] != float64(len(crossing)) {
		t.Fatalf("still down: link_left_down %v", got)
	}
}

// TestLinkLeftDownGoesWhenUp: the cable comes back; after the next trace
// the series is gone, whether the path returned onto it (the SM routed
// again) or not (the LFTs unchanged); link_info with it.
func TestLinkLeftDownGoesWhenUp(t *testing.T) {
	for _, reroute := range []bool{false, true} {
		e, f, dests, spine, port, crossing, buf := leftExporter(t)
		if err := f.SetLinkState(spine, port, false, true); err != nil {
			t.Fatal(err)
		}
		e.traceAll(t, dests)
		if len(leftDown(t, e)) != 1 {
			t.Fatalf("down: link_left_down %v", leftDown(t, e))
		}
		buf.take(t)
		if err := f.SetLinkState(spine, port, true, reroute); err != nil {
			t.Fatal(err)
		}
		e.traceAll(t, dests)
		if got := leftDown(t, e); len(got) != 0 {
			t.Fatalf("reroute %v: link up, link_left_down %v", reroute, got)
		}
		if info := linkInfo(t, e); len(info) != 0 {
			t.Fatalf("reroute %v: link up, link_info %v", reroute, info)
		}
		lines := buf.take(t)
		if n := len(withMsg(lines, "link back up")) + len(withMsg(lines, "path back on the link")); n != len(crossing) {
			t.Fatalf("reroute %v: %d lines for %d destinations: %v", reroute, n, len(crossing), lines)
		}
	}
}

// TestLinkLeftDownPathReturns: the path returns onto the link (the SM
// routes again once it is up): the entry goes because the path crosses
// it, without reading it ("path back on the link", not "link back up").
func TestLinkLeftDownPathReturns(t *testing.T) {
	e, f, dests, spine, port, crossing, buf := leftExporter(t)
	if err := f.SetLinkState(spine, port, false, true); err != nil {
		t.Fatal(err)
	}
	e.traceAll(t, dests)
	buf.take(t)
	if err := f.SetLinkState(spine, port, true, true); err != nil {
		t.Fatal(err)
	}
	link := simLink(t, f, spine, port)
	s := e.dests.get(crossing[0])
	before := s.mads
	e.traceEach(crossing[:1])
	if !crossedLinks(s.last)[link] {
		t.Fatalf("the SM did not route the path back onto the link: %s", pathString(s.last))
	}
	// The change reads the links of the detour the path left, not the entry.
	detour, _ := s.previous()
	left := uint64(0)
	for l := range crossedLinks(detour) {
		if !crossedLinks(s.last)[l] {
			left++
		}
	}
	if d, r := s.mads-before, uint64(s.last.MADs); d != r+left {
		t.Errorf("the path returned: %d MADs, its trace %d and %d links it left: want no read of the entry", d, r, left)
	}
	lines := buf.take(t)
	if b, u := withMsg(lines, "path back on the link"), withMsg(lines, "link back up"); len(b) != 1 || len(u) != 0 {
		t.Fatalf("want one \"path back on the link\", got %v", lines)
	}
}

// TestLinkLeftNotOnRebalance: the path moves while every link of the
// old one stays Active (an L0 forwarding entry changed, as an SM
// re-balancing would): the path changed, no link_left_down series.
func TestLinkLeftNotOnRebalance(t *testing.T) {
	e, f, _, spine, _, crossing, _ := leftExporter(t)
	s := e.dests.get(crossing[0])
	old := s.last
	moveOffSpine(t, f, old, s.target.LID, spine)
	e.traceAll(t, crossing[:1])
	if s.last.Signature() == old.Signature() {
		t.Fatalf("the path did not change: %s", pathString(s.last))
	}
	if got := leftDown(t, e); len(got) != 0 {
		t.Fatalf("re-routed around working links: link_left_down %v", got)
	}
}

// TestLinkLeftNoAnswer: the near end stops answering while the link is
// down: the entry stays (down at the last answer) until it has had no
// answer for 30 minutes, then goes with a line.
func TestLinkLeftNoAnswer(t *testing.T) {
	e, f, dests, spine, port, crossing, buf := leftExporter(t)
	if err := f.SetLinkState(spine, port, false, true); err != nil {
		t.Fatal(err)
	}
	e.traceAll(t, dests)
	if err := f.SetSilent(spine, true); err != nil {
		t.Fatal(err)
	}
	buf.take(t)
	e.clock.(*fakeClock).Add(29 * time.Minute)
	e.traceAll(t, crossing)
	if got := leftDown(t, e); len(got) != 1 {
		t.Fatalf("no answer for 29 minutes: link_left_down %v", got)
	}
	e.clock.(*fakeClock).Add(2 * time.Minute)
	e.traceAll(t, crossing)
	if got := leftDown(t, e); len(got) != 0 {
		t.Fatalf("no answer for 31 minutes: link_left_down %v", got)
	}
	if l := withMsg(buf.take(t), "left link dropped: no answer"); len(l) != len(crossing) {
		t.Fatalf("dropped lines %v", l)
	}
}

// TestLinkLeftBound: a destination keeps at most 64 entries; over that
// the oldest are forgotten, each with a warning, and counted in
// link_left_down_forgotten_total.
func TestLinkLeftBound(t *testing.T) {
	e, f, dests, spine, port, crossing, buf := leftExporter(t)
	if err := f.SetLinkState(spine, port, false, true); err != nil {
		t.Fatal(err)
	}
	e.traceAll(t, dests)
	s := e.dests.get(crossing[0])
	s.mu.Lock()
	real := s.left[0]
	for i := 0; len(s.left) < leftMax+6; i++ { // the same down port under other links' names, older
		en := real
		en.link.RemotePort = uint8(100 + i)
		en.since = real.since.Add(-time.Duration(i+1) * time.Minute)
		s.left = append(s.left, en)
	}
	s.mu.Unlock()
	buf.take(t)
	e.traceEach(crossing[:1])
	s.mu.Lock()
	n := len(s.left)
	s.mu.Unlock()
	if n != leftMax {
		t.Fatalf("%d entries, want %d", n, leftMax)
	}
	if w := withMsg(buf.take(t), "left link forgotten: more than 64"); len(w) != 6 {
		t.Fatalf("%d forgotten lines, want 6: %v", len(w), w)
	}
	if v := e.leftForgot.Load(); v != 6 {
		t.Fatalf("forgotten %d, want 6", v)
	}
	if got := leftDown(t, e); got[real.link] != float64(len(crossing)) {
		t.Fatalf("the newest entry was forgotten: %v", got)
	}
}
