package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/internal/ibopen"
	"github.com/ibtracer/ibtracer_exporter/linkhealth"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// qosHealthRun runs ibtracer --health --pm on fattree-mini.net with QoS:
// the PathRecord to H1-2 gives SL 5 and no VL serves SL 0, the SL of a
// run without --sl (the switches drop GMPs on it). The run is on the SM's
// node, so its SA queries (on the SM's SL, 0) cross no link.
func qosHealthRun(t *testing.T, dest ...string) (jsonWithHealth, int) {
	t.Helper()
	topo := filepath.Join(topoDir, "fattree-mini.net")
	onOpened = func(o *ibopen.Opened) {
		if sm := o.Fabric.SMNode().Name; sm != o.Node {
			t.Errorf("the run is at %s, the SM at %s: its SA queries on SL 0 would be dropped", o.Node, sm)
		}
		o.Fabric.SetPathQoS(o.Fabric.Node("H1-2").Ports[1].GUID, sim.PathQoS{SL: 5})
		o.Fabric.SetSLUnusable(0, true)
	}
	defer func() { onOpened = nil }()
	args := append([]string{"--ib.transport=sim", "--sim.topology=" + topo, "--sim.node=H0-0",
		"--timeout=100", "--retries=0", "--health", "--pm", "--format=json"}, dest...)
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	var rs []jsonWithHealth
	if err := json.Unmarshal(out.Bytes(), &rs); err != nil || len(rs) != 1 || rs[0].Health == nil {
		t.Fatalf("%v: exit %d, %v\n%s%s", dest, code, err, out.String(), errb.String())
	}
	if rs[0].Status != "ok" || len(rs[0].Health.Links) != 4 {
		t.Fatalf("%v: status %s, %d links; want ok, 4\n%s", dest, rs[0].Status, len(rs[0].Health.Links), errb.String())
	}
	return rs[0], code
}

// TestHealthCLICountersOnThePathSL: with a GUID destination, the trace
// takes the PathRecord's SL 5 (validation by the agents succeeds on it),
// and so do the link health's PerfMgt reads: every link end's counters
// are read. A LID destination has no PathRecord: its trace and reads go on
// SL 0, which the fabric drops, so there the counters beyond the local
// port are unavailable, which shows the fabric does drop SL 0.
func TestHealthCLICountersOnThePathSL(t *testing.T) {
	lids := simLIDs(t, "fattree-mini.net")
	byLID, _ := qosHealthRun(t, "-l", itoa(lids["H1-2"]))
	for _, l := range byLID.Health.Links[1:] {
		if c := l.A.Counters; c == nil || c.State != linkhealth.CountersUnavailable {
			t.Fatalf("LID destination, SL 0 dropped: link %d counters %+v, want unavailable", l.Hop, c)
		}
	}

	f, err := sim.LoadTopology(filepath.Join(topoDir, "fattree-mini.net"))
	if err != nil {
		t.Fatal(err)
	}
	fab, err := sim.New(f, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	guid := fab.Node("H1-2").Ports[1].GUID.String()
	r, code := qosHealthRun(t, "-G", guid)
	if a := r.Addressing; a == nil || a.SL != 5 || a.SLFrom != "path_record" {
		t.Fatalf("-G %s: addressing %+v, want SL 5 from the PathRecord", guid, a)
	}
	for _, h := range r.Hops[1:] {
		if !trace.AgentStatus(h.Verdict).AsPredicted() || h.ValidatedBy != "agent" {
			t.Fatalf("-G %s: hop %d verdict %q by %q; want every hop validated by its agent on SL 5", guid, h.Hop, h.Verdict, h.ValidatedBy)
		}
	}
	for _, l := range r.Health.Links {
		for _, e := range []linkhealth.LinkEnd{l.A, l.B} {
			if c := e.Counters; c == nil || c.State != linkhealth.CountersFirst {
				t.Errorf("-G %s: link %d end %s port %d: counters %+v, want read on the path's SL 5", guid, l.Hop, e.GUID, e.Port, c)
			}
		}
	}
	if code != exitOK || !r.Health.Healthy {
		t.Errorf("-G %s: exit %d, healthy %v; want 0, healthy", guid, code, r.Health.Healthy)
	}
}
