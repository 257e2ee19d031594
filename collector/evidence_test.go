package collector

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/localize"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// evidenceYAML turns the evidence on, and makes every trace validate
// afresh (no verdict shared across destinations) and give up on a dead
// hop quickly: MAD timeouts run on the real clock.
const evidenceYAML = "evidence: {enabled: true}\nshare_validation: 0s\ntimeout: 20ms\nretries: 1\n"

// badNow counts the destinations whose last trace failed or lost a hop.
func (e *Exporter) badNow(dests []string) int {
	bad := 0
	for _, n := range dests {
		if r := e.dests.get(n).last; r.Status != trace.StatusOK || r.Count(trace.AgentLost) > 0 {
			bad++
		}
	}
	return bad
}

// linkSeries gathers e's per-link evidence series: metric name to link
// to value.
func linkSeries(t *testing.T, e *Exporter) (map[string]map[localize.Link]float64, map[string]float64) {
	t.Helper()
	mfs := families(t, e)
	links, plain := map[string]map[localize.Link]float64{}, map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			lv := map[string]string{}
			for _, l := range m.GetLabel() {
				lv[l.GetName()] = l.GetValue()
			}
			v := m.GetGauge().GetValue()
			if _, ok := lv["remote_node_guid"]; !ok {
				key := mf.GetName()
				if c := lv["cause"]; c != "" {
					key += "/" + c
				}
				plain[key] = v
				continue
			}
			a, _ := ibmad.ParseGUID(lv["node_guid"])
			b, _ := ibmad.ParseGUID(lv["remote_node_guid"])
			ap, _ := strconv.Atoi(lv["port"])
			bp, _ := strconv.Atoi(lv["remote_port"])
			l := localize.Link{NodeGUID: a, Port: uint8(ap), RemoteNodeGUID: b, RemotePort: uint8(bp)}
			if localize.NewLink(b, uint8(bp), a, uint8(ap)) != l {
				t.Fatalf("%s: link %v is not in key order", mf.GetName(), l)
			}
			if links[mf.GetName()] == nil {
				links[mf.GetName()] = map[localize.Link]float64{}
			}
			links[mf.GetName()][l] = v
		}
	}
	return links, plain
}

// traceEach traces every destination once, whatever the result.
func (e *Exporter) traceEach(names []string) {
	for _, n := range names {
		e.traceOnce(context.Background(), e.dests.get(n), time.Minute)
	}
}

// simLink is the link at port of node name.
func simLink(t *testing.T, f *sim.Fabric, name string, port int) localize.Link {
	t.Helper()
	p := f.Node(name).Ports[port]
	if p.Remote == nil {
		t.Fatalf("%s[%d] is not cabled", name, port)
	}
	return localize.NewLink(p.Node.GUID, p.Num, p.Remote.Node.GUID, p.Remote.Num)
}

// spineDown is the spine link (spine to leaf L1) of the destination on L1
// whose path crosses it, and that destination.
func spineDown(t *testing.T, e *Exporter, f *sim.Fabric, dests []string) (string, int, string) {
	t.Helper()
	for _, n := range dests {
		r := e.dests.get(n).last
		if len(r.Hops) == 5 { // H0-0, L0, spine, L1, host
			sp := f.NodeByGUID(r.Hops[2].NodeGUID)
			return sp.Name, int(r.Hops[2].OutPort), n
		}
	}
	t.Fatal("no destination crosses a spine")
	return "", 0, ""
}

// checkTopSuspect checks that want is the one most suspected link, that
// every link of a good path that no bad path names has no bad paths, and
// that the suspicion sums to the bad paths.
func checkTopSuspect(t *testing.T, e *Exporter, dests []string, want localize.Link, bad int) {
	t.Helper()
	links, plain := linkSeries(t, e)
	sus, badPaths, paths := links["ibtracer_link_suspicion"], links["ibtracer_link_bad_paths"], links["ibtracer_link_paths"]
	if plain["ibtracer_evidence_bad_paths"] != float64(bad) {
		t.Fatalf("bad paths %v, want %d (%v)", plain["ibtracer_evidence_bad_paths"], bad, plain)
	}
	top, topV, sum := localize.Link{}, 0.0, 0.0
	for l, v := range sus {
		sum += v
		if v > topV {
			top, topV = l, v
		}
		if l != want && v >= sus[want] {
			t.Errorf("%v suspected %g, as much as the faulty %v (%g)", l, v, want, sus[want])
		}
	}
	if top != want {
		t.Fatalf("top suspect %v (%g), want %v; suspicion %v", top, topV, want, sus)
	}
	if d := sum - float64(bad); d > 1e-9 || d < -1e-9 {
		t.Errorf("suspicion sums to %g, want the %d bad paths", sum, bad)
	}
	if badPaths[want] == 0 || paths[want] < badPaths[want] {
		t.Errorf("faulty link: %g bad of %g paths", badPaths[want], paths[want])
	}
	// Links only good paths cross carry no bad path (and no suspicion).
	clean := 0
	for _, n := range dests {
		p, _ := e.dests.get(n).evidence(0)
		if p.Bad {
			continue
		}
		for _, l := range p.Links {
			named := false
			for _, m := range dests {
				if q, _ := e.dests.get(m).evidence(0); q.Bad {
					for _, x := range q.Suspects {
						named = named || x == l
					}
				}
			}
			if named {
				continue
			}
			clean++
			if _, ok := badPaths[l]; ok {
				t.Errorf("%v: only good paths cross it, yet %g bad paths", l, badPaths[l])
			}
			if _, ok := sus[l]; ok {
				t.Errorf("%v: only good paths cross it, yet suspected %g", l, sus[l])
			}
			if _, ok := paths[l]; ok {
				t.Errorf("%v: only good paths cross it, yet a link_paths series", l)
			}
		}
	}
	if clean == 0 {
		t.Fatal("no link crossed only by good paths: the test checks nothing there")
	}
}

func TestEvidenceNamesADeadLink(t *testing.T) {
	e, f, dests := healthExporter(t, evidenceYAML)
	e.traceAll(t, dests)
	links, plain := linkSeries(t, e)
	if len(links["ibtracer_link_suspicion"]) != 0 || len(links["ibtracer_link_bad_paths"]) != 0 || plain["ibtracer_evidence_bad_paths"] != 0 {
		t.Fatalf("fault-free fabric: suspicion %v, bad paths %v", links["ibtracer_link_suspicion"], links["ibtracer_link_bad_paths"])
	}
	if plain["ibtracer_evidence_paths"] != float64(len(dests)) || len(links["ibtracer_link_paths"]) != 0 {
		t.Fatalf("paths %v, links %d", plain["ibtracer_evidence_paths"], len(links["ibtracer_link_paths"]))
	}
	spine, port, _ := spineDown(t, e, f, dests)
	dead := simLink(t, f, spine, port)
	if err := f.SetLinkState(spine, port, false, false); err != nil { // no SM sweep yet
		t.Fatal(err)
	}
	e.traceEach(dests)
	failed := 0
	for _, n := range dests {
		if r := e.dests.get(n).last; r.Status != trace.StatusOK {
			failed++
			if r.Reason != trace.ReasonPortDown {
				t.Fatalf("%s: %s %s (%v), want port_down", n, r.Status, r.Reason, r.Err)
			}
		}
	}
	if failed == 0 {
		t.Fatal("no destination failed")
	}
	checkTopSuspect(t, e, dests, dead, e.badNow(dests))
	_, plain = linkSeries(t, e)
	if plain["ibtracer_evidence_bad_path_causes/failed"] != float64(failed) {
		t.Fatalf("causes %v", plain)
	}
}

func TestEvidenceNamesALinkThatDropsEveryMAD(t *testing.T) {
	e, f, dests := healthExporter(t, evidenceYAML)
	e.traceAll(t, dests)
	spine, port, _ := spineDown(t, e, f, dests)
	lossy := simLink(t, f, spine, port)
	if err := f.SetDropRate(spine, port, 1); err != nil {
		t.Fatal(err)
	}
	e.traceEach(dests)
	bad := e.badNow(dests)
	if bad == 0 {
		t.Fatal("no destination failed")
	}
	checkTopSuspect(t, e, dests, lossy, bad)
}

// parallelExporter is healthExporter's on a fat tree with two links
// between each leaf and spine, where a leaf's data plane can take the
// other one.
func parallelExporter(t *testing.T, yml string) (*Exporter, *sim.Fabric, []string) {
	t.Helper()
	return fatTreeExporter(t, yml, 2)
}

func TestEvidenceNamesTheLinkAtAMismatch(t *testing.T) {
	e, f, dests := parallelExporter(t, evidenceYAML)
	e.traceAll(t, dests)
	// L0's data plane sends a spine's LID over the other of its two links
	// to that spine; its tables, which the walk reads, still say the one
	// a destination's path takes to it.
	var spine trace.Hop
	var pathPort uint8
	for _, n := range dests {
		if r := e.dests.get(n).last; len(r.Hops) == 5 && f.LFT("L0")[r.Hops[2].LID] == r.Hops[1].OutPort {
			spine, pathPort = r.Hops[2], r.Hops[1].OutPort
			break
		}
	}
	if pathPort == 0 {
		t.Fatal("no path reaches a spine by the port L0's table gives for the spine's own LID")
	}
	var other uint8
	for _, p := range f.Node("L0").Ports[1:] {
		if p.Remote != nil && p.Remote.Node.GUID == spine.NodeGUID && p.Num != pathPort {
			other = p.Num
		}
	}
	if err := f.SetForwardOverride("L0", spine.LID, other); err != nil {
		t.Fatal(err)
	}
	e.traceEach(dests)
	// A path entering the spine by the other cable saw the divergence
	// over another link (mismatch_other_link): it succeeds, and its
	// evidence blames the same link, the one the MAD was routed by.
	mismatched, failed := 0, 0
	for _, n := range dests {
		r := e.dests.get(n).last
		if r.Status == trace.StatusMismatch {
			failed++
		}
		if r.Count(trace.AgentMismatch)+r.Count(trace.AgentMismatchOtherLink) > 0 {
			mismatched++
		}
	}
	if failed == 0 {
		t.Fatal("no trace mismatched")
	}
	checkTopSuspect(t, e, dests, simLink(t, f, "L0", int(pathPort)), e.badNow(dests)+mismatched-failed)
	_, plain := linkSeries(t, e)
	if plain["ibtracer_evidence_bad_path_causes/mismatch"] != float64(mismatched) {
		t.Fatalf("causes %v", plain)
	}
}

func TestEvidenceOffEmitsNothing(t *testing.T) {
	e, _, dests := healthExporter(t, "")
	e.traceAll(t, dests)
	links, plain := linkSeries(t, e)
	if len(links["ibtracer_link_paths"]) != 0 || len(plain) == 0 {
		t.Fatalf("evidence off: %d link_paths", len(links["ibtracer_link_paths"]))
	}
	if _, ok := plain["ibtracer_evidence_paths"]; ok {
		t.Fatal("evidence off: ibtracer_evidence_paths")
	}
}

func TestEvidenceNamesADegradedLink(t *testing.T) {
	e, f, dests := healthExporter(t, "health: {enabled: true}\n"+evidenceYAML)
	e.traceAll(t, dests)
	spine, port, _ := spineDown(t, e, f, dests)
	narrow := simLink(t, f, spine, port)
	if err := f.SetLinkWidth(spine, port, true); err != nil { // trained at a lower width
		t.Fatal(err)
	}
	e.freshTracer()      // a fresh health checker: no shared readings
	e.traceAll(t, dests) // every trace succeeds: only the health check sees it
	bad := 0
	for _, n := range dests {
		if ph := e.dests.get(n).lastHealth(); ph != nil && !ph.Healthy {
			bad++
		}
	}
	if bad == 0 {
		t.Fatal("no path unhealthy")
	}
	checkTopSuspect(t, e, dests, narrow, bad)
	_, plain := linkSeries(t, e)
	if plain["ibtracer_evidence_bad_path_causes/link"] != float64(bad) {
		t.Fatalf("causes %v", plain)
	}
}

// A switch whose table lost a destination's route (a buggy SM, or one
// that took out a link): the trace fails with no_route there, and the
// link the previous path took out of that switch is named.
func TestEvidenceNamesTheLinkANoRouteTableDropped(t *testing.T) {
	e, f, dests := healthExporter(t, evidenceYAML)
	e.traceAll(t, dests)
	spine, port, dest := spineDown(t, e, f, dests)
	lid, _ := f.LIDOf(dest, 0)
	if err := f.SetLFTEntry(spine, lid, ibmad.LFTNoRoute); err != nil {
		t.Fatal(err)
	}
	e.traceEach(dests)
	if r := e.dests.get(dest).last; r.Reason != trace.ReasonNoRoute {
		t.Fatalf("%s: %s %s (%v), want no_route", dest, r.Status, r.Reason, r.Err)
	}
	checkTopSuspect(t, e, dests, simLink(t, f, spine, port), e.badNow(dests))
}

// Once the SM has routed around a dead link, every path is good again:
// no link is suspected, though previous paths still cross the dead one.
func TestEvidenceClearsWhenTheSMRoutesAround(t *testing.T) {
	e, f, dests := healthExporter(t, evidenceYAML)
	e.traceAll(t, dests)
	spine, port, dest := spineDown(t, e, f, dests)
	if err := f.SetLinkState(spine, port, false, false); err != nil {
		t.Fatal(err)
	}
	e.traceEach(dests)
	if links, _ := linkSeries(t, e); len(links["ibtracer_link_suspicion"]) == 0 {
		t.Fatal("dead link: nothing suspected")
	}
	if err := f.SetLinkState(spine, port, false, true); err != nil { // the SM sweeps
		t.Fatal(err)
	}
	e.traceAll(t, dests)
	if s := e.dests.get(dest); s.previousPath(s.last) == nil {
		t.Fatalf("%s: no previous path after the reroute", dest)
	}
	links, plain := linkSeries(t, e)
	if len(links["ibtracer_link_suspicion"]) != 0 || len(links["ibtracer_link_paths"]) != 0 || plain["ibtracer_evidence_bad_paths"] != 0 {
		t.Fatalf("after the reroute: suspicion %v, bad paths %v", links["ibtracer_link_suspicion"], plain["ibtracer_evidence_bad_paths"])
	}
}

// TestEvidenceSparesTheSourceLinkOfALostHop decides issue 35's question
// of the exporter's own link (docs/metrics.md, "Link evidence"): under
// --sim.faults, that never-faulted link, in front of every hop, was
// suspected more (1.45) than the faulted one (1.0), because a lost
// validation blamed every link in front of the lost hop. Here the agent
// of the exporter's leaf stops answering (every path's hop 1 is lost,
// while each destination still answers through it), and a spine link
// drops every MAD. The dead link is the one most suspected, and the
// exporter's own link, crossed both ways by every destination's answer,
// is not suspected at all: a hop's silence is its own when an answer
// from past it came through the links in front of it.
func TestEvidenceSparesTheSourceLinkOfALostHop(t *testing.T) {
	e, f, dests := healthExporter(t, evidenceYAML+"validate: agent\n")
	e.traceAll(t, dests)
	spine, port, _ := spineDown(t, e, f, dests)
	dead := simLink(t, f, spine, port)
	source := simLink(t, f, "H0-0", 1)
	if err := f.SetAgentsMute("L0", true); err != nil {
		t.Fatal(err)
	}
	if err := f.SetDropRate(spine, port, 1); err != nil {
		t.Fatal(err)
	}
	e.traceEach(dests)
	lost := 0
	for _, n := range dests {
		if r := e.dests.get(n).last; len(r.Hops) > 1 && r.Hops[1].Agent == trace.AgentLost && r.Status == trace.StatusOK {
			lost++
		}
	}
	if lost == 0 {
		t.Fatal("no path lost its leaf's validation: the test proves nothing")
	}
	links, _ := linkSeries(t, e)
	sus := links["ibtracer_link_suspicion"]
	if v := sus[source]; v != 0 {
		t.Errorf("the exporter's own link suspected %g (%d paths lost hop 1 and answered through it); want none", v, lost)
	}
	for l, v := range sus {
		if l != dead && v >= sus[dead] {
			t.Errorf("%v suspected %g, as much as the dead %v (%g)", l, v, dead, sus[dead])
		}
	}
	if sus[dead] == 0 {
		t.Errorf("the dead link is not suspected: %v", sus)
	}
}
