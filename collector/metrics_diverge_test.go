package collector

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-kit/log"

	"github.com/ibtracer/ibtracer_exporter/trace"
)

// TestMismatchNamesTheDivergingSwitchInMetricsAndLogs: the simulator's
// diverging-switch fault (L0 sends a spine's LID out of the other of its
// two cables to that spine) is seen at the spine; the exporter's metric
// ibtracer_path_diverging_switch_info and its log lines name L0, by name
// with its GUID, and the hop where it was seen. A destination whose path
// enters the spine by the cable L0's table names for the spine's LID
// fails as a port mismatch ("destination failing"); one whose path enters
// it by the other cable saw the divergence over another link than its
// own (mismatch_other_link): it succeeds, and its line is "divergence off
// the path", once, and "divergence off the path cleared" when it ends
// (issue 40, defect 8).
func TestMismatchNamesTheDivergingSwitchInMetricsAndLogs(t *testing.T) {
	e, f, dests := parallelExporter(t, "share_validation: 0s\ntimeout: 20ms\nretries: 1\n")
	var buf logBuffer
	e.logger = log.NewLogfmtLogger(&buf)
	e.traceAll(t, dests)
	spine := spineByBothCables(t, e, dests)
	programmed := f.LFT("L0")[spine.LID]
	var other uint8
	for _, p := range f.Node("L0").Ports[1:] {
		if p.Remote != nil && p.Remote.Node.GUID == spine.NodeGUID && p.Num != programmed {
			other = p.Num
		}
	}
	if err := f.SetForwardOverride("L0", spine.LID, other); err != nil {
		t.Fatal(err)
	}
	buf.take(t)
	e.traceEach(dests)
	l0 := f.Node("L0").GUID.String()
	var onPath, offPath []string
	for _, n := range dests {
		r := e.dests.get(n).last
		switch {
		case r.Status == trace.StatusMismatch:
			onPath = append(onPath, n)
		case r.Status == trace.StatusOK && r.Count(trace.AgentMismatchOtherLink) > 0:
			if r.Count(trace.AgentMismatchOtherLink) != 1 || r.Hops[2].Agent != trace.AgentMismatchOtherLink || r.Hops[1].OutPort == programmed {
				t.Fatalf("%s: %s: want the spine, entered by L0 port %d, not %d, mismatched over another link", n, r.Verdicts(), r.Hops[1].OutPort, programmed)
			}
			offPath = append(offPath, n)
		}
	}
	if len(onPath) == 0 || len(offPath) == 0 {
		t.Fatalf("%d destinations mismatched on their path, %d over another link: want some of each", len(onPath), len(offPath))
	}
	text := scrape(t, e)
	for _, n := range append(append([]string(nil), onPath...), offPath...) {
		want := fmt.Sprintf(`ibtracer_path_diverging_switch_info{dest="%s",seen_at="%s",seen_at_hop="2",switch_guid="%s",switch_name="L0"} 1`,
			n, spine.NodeDesc, l0)
		if !strings.Contains(text, want) {
			t.Errorf("no %s in\n%s", want, grep(text, "diverging"))
		}
	}
	if got := strings.Count(text, "ibtracer_path_diverging_switch_info{"); got != len(onPath)+len(offPath) {
		t.Errorf("%d diverging_switch_info series, want one per mismatched destination (%d)", got, len(onPath)+len(offPath))
	}
	for _, n := range offPath {
		want := fmt.Sprintf(`ibtracer_trace_success{dest="%s"} 1`, n)
		if !strings.Contains(text, want) {
			t.Errorf("no %s: a divergence off the path failed the destination\n%s", want, grep(text, "trace_success"))
		}
	}
	named, off := divergenceLines(t, buf.take(t), "L0 ("+l0+")", "hop 2 "+spine.NodeDesc)
	if named != len(onPath) || off != len(offPath) {
		t.Errorf("%d failing lines and %d off-path lines name the switch, want %d and %d", named, off, len(onPath), len(offPath))
	}
	e.traceEach(dests)
	for _, l := range buf.take(t) {
		if l["level"] != "debug" {
			t.Errorf("the same divergence traced again logged %v", l)
		}
	}
	if err := f.SetForwardOverride("L0", spine.LID, programmed); err != nil {
		t.Fatal(err)
	}
	e.traceEach(dests)
	cleared := 0
	for _, l := range buf.take(t) {
		if l["msg"] == "divergence off the path cleared" {
			cleared++
		}
	}
	if cleared != len(offPath) {
		t.Errorf("%d cleared lines, want %d", cleared, len(offPath))
	}
}

// spineByBothCables returns a spine the traced paths from L0 enter by
// both of L0's cables to it.
func spineByBothCables(t *testing.T, e *Exporter, dests []string) trace.Hop {
	t.Helper()
	cables := map[string]map[uint8]bool{}
	for _, n := range dests {
		if r := e.dests.get(n).last; len(r.Hops) == 5 && r.Hops[1].NodeDesc == "L0" {
			sp := r.Hops[2].NodeDesc
			if cables[sp] == nil {
				cables[sp] = map[uint8]bool{}
			}
			if cables[sp][r.Hops[1].OutPort] = true; len(cables[sp]) == 2 {
				return r.Hops[2]
			}
		}
	}
	t.Fatalf("no spine that paths from L0 enter by both cables: %v", cables)
	return trace.Hop{}
}

// divergenceLines counts the "destination failing" (port mismatch) and
// "divergence off the path" lines, each of which must name the switch sw
// seen at seenAt.
func divergenceLines(t *testing.T, lines []map[string]string, sw, seenAt string) (failing, off int) {
	t.Helper()
	for _, l := range lines {
		switch {
		case l["msg"] == "destination failing" && strings.HasPrefix(l["state"], "mismatch"):
			failing++
		case l["msg"] == "divergence off the path":
			if l["seen_at_hops"] != seenAt {
				t.Errorf("log line %v: want seen_at_hops %s", l, seenAt)
			}
			off++
		default:
			continue
		}
		if l["diverging_switch"] != sw || l["seen_at"] != seenAt {
			t.Errorf("log line %v: want diverging_switch %s seen_at %s", l, sw, seenAt)
		}
	}
	return failing, off
}

// TestMismatchBehindAnInnocentSwitchNamesNoSwitch: L0's data plane sends
// the far leaf's LID to the other spine than its table names; that spine
// forwards it as its table says, so the mismatch seen at the far leaf has
// an innocent switch behind its arrival port. No
// ibtracer_path_diverging_switch_info series, and no diverging_switch in
// the "destination failing" log lines.
func TestMismatchBehindAnInnocentSwitchNamesNoSwitch(t *testing.T) {
	e, f, dests := parallelExporter(t, "share_validation: 0s\ntimeout: 20ms\nretries: 1\n")
	var buf logBuffer
	e.logger = log.NewLogfmtLogger(&buf)
	e.traceAll(t, dests)
	var leaf trace.Hop
	for _, n := range dests {
		if r := e.dests.get(n).last; len(r.Hops) == 5 && r.Hops[1].NodeDesc == "L0" {
			leaf = r.Hops[3]
			break
		}
	}
	if leaf.LID == 0 {
		t.Fatal("no path crosses L0 to the far leaf")
	}
	l0 := f.Node("L0")
	programmed := l0.Ports[f.LFT("L0")[leaf.LID]].Remote.Node
	var other uint8
	for _, p := range l0.Ports[1:] {
		if p.Remote != nil && p.Remote.Node.IsSwitch() && p.Remote.Node != programmed {
			other = p.Num
		}
	}
	if err := f.SetForwardOverride("L0", leaf.LID, other); err != nil {
		t.Fatal(err)
	}
	buf.take(t)
	e.traceEach(dests)
	mismatched := 0
	for _, n := range dests {
		if r := e.dests.get(n).last; r.Status == trace.StatusMismatch {
			mismatched++
		}
	}
	if mismatched == 0 {
		t.Fatal("no trace mismatched")
	}
	if text := scrape(t, e); strings.Contains(text, "ibtracer_path_diverging_switch_info{") {
		t.Errorf("a switch is named:\n%s", grep(text, "diverging"))
	}
	failing := 0
	for _, l := range buf.take(t) {
		if l["msg"] == "destination failing" && strings.HasPrefix(l["state"], "mismatch") {
			if _, ok := l["diverging_switch"]; ok {
				t.Errorf("log line %v names a diverging switch", l)
			}
			failing++
		}
	}
	if failing != mismatched {
		t.Errorf("%d failing lines, want %d", failing, mismatched)
	}
}
