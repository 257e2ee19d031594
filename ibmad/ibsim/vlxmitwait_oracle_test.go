package ibsim_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/ibmad/madtest"
)

// perfqueryFields runs perfquery with args at node host1 and reads its
// "Name:.....value" lines.
func perfqueryFields(t *testing.T, fab *ibsimtest.Fabric, args ...string) map[string]uint64 {
	t.Helper()
	out, err := fab.Tool("host1", "perfquery", args...)
	if err != nil {
		t.Fatalf("perfquery %v: %v\n%s", args, err, out)
	}
	return ibsimtest.PerfqueryCounters(out)
}

// pmaGet sends a PerfMgt Get of attr for port to lid and decodes it.
func pmaGet(t *testing.T, e *ibmad.Engine, lid uint16, port uint8, attr ibmad.AttrID, out interface{ UnmarshalBinary([]byte) error }) {
	t.Helper()
	g := ibmad.NewPerfMgtGet(attr)
	g.Data[1] = port
	req := &ibmad.Request{Addr: ibmad.GSIAddress(lid, 0)}
	if err := g.MarshalTo(req.MAD[:]); err != nil {
		t.Fatal(err)
	}
	var resp ibmad.Response
	if err := e.Do(context.Background(), req, &resp); err != nil || resp.MAD.Status() != 0 {
		t.Fatalf("PerfMgt %s of LID %d port %d: %v, status %v", ibmad.AttrName(ibmad.ClassPerfMgt, attr), lid, port, err, resp.MAD.Status())
	}
	if err := out.UnmarshalBinary(resp.MAD.PerfMgtData()); err != nil {
		t.Fatal(err)
	}
}

// TestPortVLXmitWaitMatchesPerfquery is the oracle of the per-VL waits and
// of PortXmitWait: ibsim's PerformanceSet sets them on a few ports, and
// our decoding of PortVLXmitWaitCounters and PortCounters, asked of
// ibsim's PMA, equals perfquery --vlxmitcounters' and perfquery's, field
// for field, on those ports and on one left alone.
func TestPortVLXmitWaitMatchesPerfquery(t *testing.T) {
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "health.net"), ibsimtest.Options{})
	type port struct {
		node string
		num  uint8
	}
	vlSet := map[port]map[int]uint64{
		{"sw1", 1}:   {0: 7, 3: 300, 15: 65535},
		{"sw2", 5}:   {7: 1234, 8: 1},
		{"host2", 1}: {1: 42},
		{"sw2", 1}:   {},
	}
	waitSet := map[port]uint64{{"sw1", 1}: 99999, {"sw2", 5}: 5, {"host2", 1}: 77}
	for p, vls := range vlSet {
		for vl, v := range vls {
			cmd := fmt.Sprintf(`PerformanceSet "%s"[%d] PortVLXmitWaitCounters.PortVLXmitWaitCounters%d=%d`, p.node, p.num, vl, v)
			if err := fab.Console(cmd); err != nil {
				t.Fatal(err)
			}
		}
	}
	for p, v := range waitSet {
		if err := fab.Console(fmt.Sprintf(`PerformanceSet "%s"[%d] PortCounters.PortXmitWait=%d`, p.node, p.num, v)); err != nil {
			t.Fatal(err)
		}
	}
	// The console is asynchronous and takes commands in order: a last
	// setting shows once every one before it applies.
	if err := fab.Console(`PerformanceSet "host3"[1] PortCounters.PortXmitDiscards=11`); err != nil {
		t.Fatal(err)
	}
	tr := fab.Dial("host1", false)
	e := ibmad.NewEngine(tr, ibmad.Options{Timeout: 2 * time.Second})
	defer e.Close()
	ctx := context.Background()
	ports, err := madtest.WalkPortLIDs(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	lid := map[string]uint16{}
	for _, p := range ports {
		lid[p.Node.Desc] = p.LID
	}
	deadline := time.Now().Add(30 * time.Second)
	for perfqueryFields(t, fab, strconv.Itoa(int(lid["host3"])), "1")["PortXmitDiscards"] != 11 {
		if time.Now().After(deadline) {
			t.Fatalf("PerformanceSet not applied:\n%s", fab.Output())
		}
		time.Sleep(50 * time.Millisecond)
	}
	compared := 0
	for p, vls := range vlSet {
		l, ok := lid[p.node]
		if !ok {
			t.Fatalf("no LID for %s (walked %v)", p.node, lid)
		}
		args := []string{strconv.Itoa(int(l)), strconv.Itoa(int(p.num))}
		pq := perfqueryFields(t, fab, append([]string{"--vlxmitcounters"}, args...)...)
		var ours ibmad.PortVLXmitWaitCounters
		pmaGet(t, e, l, p.num, ibmad.AttrPortVLXmitWaitCounters, &ours)
		if pq["PortSelect"] != uint64(ours.PortSelect) || ours.PortSelect != p.num {
			t.Errorf("%s[%d]: PortSelect ours %d, perfquery %d", p.node, p.num, ours.PortSelect, pq["PortSelect"])
		}
		for vl, got := range ours.PortVLXmitWait {
			name := fmt.Sprintf("PortVLXmitWait%d", vl)
			want, ok := pq[name]
			if !ok {
				t.Fatalf("%s[%d]: perfquery printed no %s:\n%v", p.node, p.num, name, pq)
			}
			if uint64(got) != want || want != vls[vl] {
				t.Errorf("%s[%d] %s: ours %d, perfquery %d, set %d", p.node, p.num, name, got, want, vls[vl])
			}
			compared++
		}
		var pc ibmad.PortCounters
		pmaGet(t, e, l, p.num, ibmad.AttrPortCounters, &pc)
		if want := perfqueryFields(t, fab, args...)["PortXmitWait"]; uint64(pc.PortXmitWait) != want || want != waitSet[p] {
			t.Errorf("%s[%d] PortXmitWait: ours %d, perfquery %d, set %d", p.node, p.num, pc.PortXmitWait, want, waitSet[p])
		}
		compared++
	}
	t.Logf("%d counters equal to perfquery's", compared)
}
