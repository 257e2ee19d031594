package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/localize"
)

// iblinkinfoLineRe is one cabled port of `iblinkinfo -l`: the port's
// GUID and node description, its LID and port number, then the remote
// port's GUID, LID, port number and node description.
var iblinkinfoLineRe = regexp.MustCompile(`^(0x[0-9a-f]+)\s+"\s*([^"]*)"\s+(\d+)\s+(\d+)\[[^\]]*\]\s+==\(.*\)==>\s+(0x[0-9a-f]+)\s+(\d+)\s+(\d+)\[[^\]]*\]\s+"\s*([^"]*)"`)

var nodeGUIDRe = regexp.MustCompile(`(?m)^Guid:\.*(0x[0-9a-f]+)$`)

// linkOf is the link between node a and node b as infiniband-diags see
// it through OpenSM's fabric: the ports `iblinkinfo -l` cables together
// (it prints port GUIDs and LIDs), each end's node GUID from `smpquery
// nodeinfo` of its LID.
func linkOf(t *testing.T, fab *ibsimtest.Fabric, a, b string) (localize.Link, string) {
	t.Helper()
	out, err := fab.Tool("host1", "iblinkinfo", "-l")
	if err != nil {
		t.Fatalf("iblinkinfo -l: %v\n%s", err, out)
	}
	nodeGUID := func(lid string) ibmad.GUID {
		ni, err := fab.Tool("host1", "smpquery", "nodeinfo", lid)
		m := nodeGUIDRe.FindStringSubmatch(ni)
		if err != nil || m == nil {
			t.Fatalf("smpquery nodeinfo %s: %v\n%s", lid, err, ni)
		}
		g, err := ibmad.ParseGUID(m[1])
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	for _, l := range strings.Split(out, "\n") {
		m := iblinkinfoLineRe.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil || m[2] != a || m[8] != b {
			continue
		}
		ap, _ := strconv.Atoi(m[4])
		bp, _ := strconv.Atoi(m[7])
		return localize.NewLink(nodeGUID(m[3]), uint8(ap), nodeGUID(m[6]), uint8(bp)), l
	}
	t.Fatalf("iblinkinfo -l has no %s - %s link:\n%s", a, b, out)
	return localize.Link{}, ""
}

// series is name{the link's labels}.
func linkSeriesName(name string, l localize.Link) string {
	v := l.Labels()
	return fmt.Sprintf(`%s{node_guid=%q,port=%q,remote_node_guid=%q,remote_port=%q}`, name, v[0], v[1], v[2], v[3])
}

// TestEvidenceNamesThePulledCable: on ibsim with OpenSM sweeping, the
// exporter's link evidence is empty while every path is good; when
// near's only cable is pulled, it names that cable, by the ends
// iblinkinfo and smpquery give, before the SM sweeps (the walk finds the port down)
// and after (the switch's table has no route left), and no other link;
// ibtracer_link_info names both ends by their node descriptions.
func TestEvidenceNamesThePulledCable(t *testing.T) {
	skipShort(t)
	fab, lids := startTwoSwitch(t)
	startAgents(t, fab, "host2")
	cable, line := linkOf(t, fab, "sw1", "host3")
	t.Logf("near's cable, by iblinkinfo -l and smpquery nodeinfo: %v (%s)", cable, strings.TrimSpace(line))
	cfg := fmt.Sprintf("interval: 1s\ntimeout: 200ms\nretries: 1\nevidence: {enabled: true}\ndestinations:\n"+
		"  - {name: far, lid: %d}\n  - {name: far2, lid: %d}\n  - {name: near, lid: %d}\n", lids["host2"], lids["host4"], lids["host3"])
	exp := startIbsimExporter(t, fab, "host1", cfg)
	b := exp.waitFor(30*time.Second, "first traces", allTraced("far", "far2", "near"))
	if v, ok := value(b, "ibtracer_evidence_paths"); !ok || v != 3 {
		t.Fatalf("evidence_paths %v %v, want 3:\n%s", v, ok, grepMetrics(b, "ibtracer_evidence"))
	}
	if n := strings.Count(b, "\nibtracer_link_suspicion{"); n != 0 {
		t.Fatalf("%d links suspected on a healthy fabric:\n%s", n, grepMetrics(b, "ibtracer_link_"))
	}
	if err := fab.Console(`Unlink "sw1"[2]`); err != nil {
		t.Fatal(err)
	}
	named := func(reason string) func(string) bool {
		return func(b string) bool {
			v, _ := value(b, fmt.Sprintf(`ibtracer_trace_failures_total{dest="near",reason=%q}`, reason))
			s, _ := value(b, linkSeriesName("ibtracer_link_suspicion", cable))
			return v >= 1 && s == 1
		}
	}
	check := func(b, when string) {
		t.Helper()
		if n := strings.Count(b, "\nibtracer_link_suspicion{"); n != 1 {
			t.Errorf("%s: %d links suspected, want only %v:\n%s", when, n, cable, grepMetrics(b, "ibtracer_link_"))
		}
		if v, _ := value(b, linkSeriesName("ibtracer_link_bad_paths", cable)); v != 1 {
			t.Errorf("%s: %v bad paths on %v, want 1", when, v, cable)
		}
		if v, _ := value(b, `ibtracer_evidence_bad_path_causes{cause="failed"}`); v != 1 {
			t.Errorf("%s: %v failed paths, want 1:\n%s", when, v, grepMetrics(b, "ibtracer_evidence"))
		}
		// Both ends named by the node descriptions ibsim gives them,
		// from the traces (host3 is not reached any more; its
		// description is the previous path's), for the alerts.
		lv := cable.Labels() // the exposition's order: labels sorted by name
		info := fmt.Sprintf(`ibtracer_link_info{node_desc="host3",node_guid=%q,node_name="host3",port=%q,remote_node_desc="sw1",remote_node_guid=%q,remote_node_name="sw1",remote_port=%q}`,
			lv[0], lv[1], lv[2], lv[3])
		if cable.NodeGUID > cable.RemoteNodeGUID || strings.Count(b, "\nibtracer_link_info{") != 1 {
			t.Errorf("%s: link_info, want one for %v:\n%s", when, cable, grepMetrics(b, "ibtracer_link_info"))
		} else if v, ok := value(b, info); !ok || v != 1 {
			t.Errorf("%s: no %s:\n%s", when, info, grepMetrics(b, "ibtracer_link_info"))
		}
	}
	// OpenSM sweeps every second: the port_down phase may be short, so
	// it is logged rather than required; the no_route one lasts.
	if b, d, ok := exp.await(20*time.Second, named("port_down")); ok {
		t.Logf("port_down named %v after %v", cable, d.Round(time.Millisecond))
		check(b, "port down")
	} else {
		t.Logf("no port_down trace seen with the cable named (the SM swept first)")
	}
	b = exp.waitFor(45*time.Second, "the pulled cable named after the sweep (no_route)", named("no_route"))
	check(b, "no route")
	t.Logf("named after the sweep:\n%s", grepMetrics(b, "ibtracer_link_"))
}
