package collector

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// TestEvidenceLeavesMulticastOut: an mlid: destination whose member
// leaves the group stops where the group's tree misses it. That is a
// membership matter, not a cable: no link is blamed, and a multicast
// path is not counted among the paths judged (docs/metrics.md, "Link
// evidence").
func TestEvidenceLeavesMulticastOut(t *testing.T) {
	f := mcastFabric(t)
	tp, _ := f.Attach("H0-0", 0)
	eng := ibmad.NewEngine(tp, ibmad.Options{})
	defer eng.Close()
	lid, _ := f.LIDOf("H1-1", 0)
	e := New(log.NewNopLogger(), "seed")
	e.clock = newFakeClock(time.Unix(1800000000, 0)) // the scheduler never fires: the test traces
	defer e.Stop()
	e.SetDevice(eng, nil, nil)
	e.Apply(mustConfig(t, fmt.Sprintf("evidence: {enabled: true}\ninterval: 1h\ntimeout: 100ms\nretries: 0\n"+
		"destinations:\n  - {name: mc, mlid: 0xc001, lid: %d}\n  - {name: uni, lid: %d}\n", lid, lid)))
	mc, uni := e.dests.get("mc"), e.dests.get("uni")
	e.traceOnce(context.Background(), mc, time.Minute)
	e.traceOnce(context.Background(), uni, time.Minute)
	if mc.last.Status != trace.StatusOK || uni.last.Status != trace.StatusOK {
		t.Fatalf("before: mc %s (%v), uni %s (%v)", mc.last.Status, mc.last.Err, uni.last.Status, uni.last.Err)
	}
	// H1-1 leaves the group: the SM takes it out of the tree.
	if err := f.SetMulticastGroup(0xc001, "H0-0", "H1-2"); err != nil {
		t.Fatal(err)
	}
	e.traceOnce(context.Background(), mc, time.Minute)
	if mc.last.Status != trace.StatusUnreachable || len(mc.last.Hops) < 2 {
		t.Fatalf("after the member left: %s %s (%v), %d hops", mc.last.Status, mc.last.Reason, mc.last.Err, len(mc.last.Hops))
	}
	links, plain := linkSeries(t, e)
	if len(links["ibtracer_link_suspicion"]) != 0 || len(links["ibtracer_link_bad_paths"]) != 0 || plain["ibtracer_evidence_bad_paths"] != 0 {
		t.Fatalf("a member that left its group blames links: suspicion %v, bad paths %v, evidence_bad_paths %v",
			links["ibtracer_link_suspicion"], links["ibtracer_link_bad_paths"], plain["ibtracer_evidence_bad_paths"])
	}
	if plain["ibtracer_evidence_paths"] != 1 {
		t.Fatalf("evidence_paths %v, want 1 (the unicast destination only)", plain["ibtracer_evidence_paths"])
	}
}
