package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/linkhealth"
)

// TestVLXmitWaitMatchesPerfquery: on ibsim + OpenSM, ports on the path
// host1 -> host2 wait (PerformanceSet sets PortXmitWait and per-VL
// waits); ibtracer --pm reads PortVLXmitWaitCounters at exactly the link
// ends whose PortXmitWait is not 0, and its values equal perfquery
// --vlxmitcounters' field for field; -v names the waiting VLs.
func TestVLXmitWaitMatchesPerfquery(t *testing.T) {
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "health.net"), ibsimtest.Options{})
	waits := map[string]map[int]uint64{ // node[port]: VL -> ticks; PortXmitWait is their sum
		`"sw1"[3]`: {2: 500},
		`"sw1"[5]`: {6: 300, 1: 100},
		`"sw2"[1]`: {0: 50, 15: 7},
	}
	for port, vls := range waits {
		sum := uint64(0)
		for vl, v := range vls {
			sum += v
			if err := fab.Console(fmt.Sprintf(`PerformanceSet %s PortVLXmitWaitCounters.PortVLXmitWaitCounters%d=%d`, port, vl, v)); err != nil {
				t.Fatal(err)
			}
		}
		if err := fab.Console(fmt.Sprintf(`PerformanceSet %s PortCounters.PortXmitWait=%d`, port, sum)); err != nil {
			t.Fatal(err)
		}
	}
	// The console takes commands in order: once the last shows, all do.
	if err := fab.Console(`PerformanceSet "host3"[1] PortCounters.PortXmitDiscards=11`); err != nil {
		t.Fatal(err)
	}
	byName := byName(allLIDs(t, fab, "host1"))
	awaitPerfquery(t, fab, byName["host3"], 1, "PortXmitDiscards", 11)
	args := []string{"-l", strconv.Itoa(int(byName["host2"])), "--pm"}
	out, errOut, code := runCLI(t, fab, "host1", append(args, "--format=json")...)
	var rs []jsonWithHealth
	if err := json.Unmarshal([]byte(out), &rs); err != nil || len(rs) != 1 || rs[0].Health == nil {
		t.Fatalf("exit %d %v\n%s%s", code, err, out, errOut)
	}
	read := 0
	for _, l := range rs[0].Health.Links {
		for _, end := range []linkhealth.LinkEnd{l.A, l.B} {
			c := end.Counters
			key := fmt.Sprintf(`"%s"[%d]`, end.NodeDesc, end.Port)
			if c == nil || c.Values["PortXmitWait"] == 0 {
				if c != nil && c.VLXmitWait != nil {
					t.Errorf("%s: PortXmitWait 0, yet the VLs were read: %+v", key, c.VLXmitWait)
				}
				if waits[key] != nil {
					t.Errorf("%s waits %v, ours %+v", key, waits[key], c)
				}
				continue
			}
			if c.VLXmitWait == nil || c.VLXmitWait.Err != "" || len(c.VLXmitWait.Values) != 16 {
				t.Fatalf("%s: PortXmitWait %d, VL reading %+v", key, c.Values["PortXmitWait"], c.VLXmitWait)
			}
			pq := perfqueryVL(t, fab, end.LID, end.Port)
			for vl, v := range c.VLXmitWait.Values {
				if want := pq[fmt.Sprintf("PortVLXmitWait%d", vl)]; v != want || v != waits[key][vl] {
					t.Errorf("%s VL%d: ours %d, perfquery %d, set %d", key, vl, v, want, waits[key][vl])
				}
			}
			read++
		}
	}
	if read < 2 {
		t.Fatalf("VLs read at %d link ends, want the sw1 uplink and sw2[1]:\n%s", read, out)
	}
	verbose, _, _ := runCLI(t, fab, "host1", append(args, "-v")...)
	if !strings.Contains(verbose, "waits on VL0=50,VL15=7") {
		t.Fatalf("-v does not name sw2[1]'s waiting VLs:\n%s", verbose)
	}
	t.Logf("VL waits equal to perfquery's at %d link ends", read)
}

// perfqueryVL runs perfquery --vlxmitcounters LID PORT.
func perfqueryVL(t *testing.T, fab *ibsimtest.Fabric, lid uint16, port uint8) map[string]uint64 {
	t.Helper()
	out, err := fab.Tool("host1", "perfquery", "--vlxmitcounters", strconv.Itoa(int(lid)), strconv.Itoa(int(port)))
	if err != nil {
		t.Fatal(err)
	}
	return ibsimtest.PerfqueryCounters(out)
}
