package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/linkhealth"
)

// linkinfoRe is one active port of iblinkinfo's default output:
// [port GUID] LID port[ext] ==( width speed state/phys)==> remote ... (width msg speed msg)
var linkinfoRe = regexp.MustCompile(`^\s+(?:0x[0-9a-f]+\s+)?\d+\s+(\d+)\[\s*\d*\]\s+==\(\s*(\d+X)\s+([\d.]+) Gbps\s+(\w+)/\s*(\w+)\)==>.*\((.*)\)\s*$`)

type linkinfoPort struct {
	width, speed, state, phys string
	couldWidth, couldSpeed    string // "" when iblinkinfo says nothing
}

var couldRe = regexp.MustCompile(`Could be (\d+X)|Could be ([\d.]+) Gbps`)

// parseIblinkinfo maps "node description/port" to iblinkinfo's line.
func parseIblinkinfo(t *testing.T, out string) map[string]linkinfoPort {
	t.Helper()
	ports := map[string]linkinfoPort{}
	node := ""
	for _, l := range strings.Split(out, "\n") {
		if m := regexp.MustCompile(`^(?:Switch: 0x[0-9a-f]+|CA:) (.*):$`).FindStringSubmatch(l); m != nil {
			node = m[1]
			continue
		}
		m := linkinfoRe.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		p := linkinfoPort{width: m[2], speed: m[3], state: m[4], phys: m[5]}
		for _, c := range couldRe.FindAllStringSubmatch(m[6], -1) {
			if c[1] != "" {
				p.couldWidth = c[1]
			} else {
				p.couldSpeed = c[2]
			}
		}
		ports[node+"/"+m[1]] = p
	}
	if len(ports) < 10 {
		t.Fatalf("iblinkinfo: %d active ports parsed from\n%s", len(ports), out)
	}
	return ports
}

// ibsimSpeed is the Gbps string iblinkinfo prints for a lane speed.
var ibsimSpeed = map[linkhealth.Speed]string{linkhealth.SpeedSDR: "2.5", linkhealth.SpeedDDR: "5.0", linkhealth.SpeedQDR: "10.0"}

// perfqueryValues runs perfquery LID PORT and reads its counters.
func perfqueryValues(t *testing.T, fab *ibsimtest.Fabric, lid uint16, port uint8) map[string]uint64 {
	t.Helper()
	out, err := fab.Tool("host1", "perfquery", strconv.Itoa(int(lid)), strconv.Itoa(int(port)))
	if err != nil {
		t.Fatal(err)
	}
	return ibsimtest.PerfqueryCounters(out)
}

// TestHealthMatchesIblinkinfoAndPerfquery is the oracle: on ibsim + OpenSM,
// for every link of the paths traced from two sources, our width, speed,
// state and "could be" equal iblinkinfo's and our counters perfquery's.
func TestHealthMatchesIblinkinfoAndPerfquery(t *testing.T) {
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "health.net"), ibsimtest.Options{})
	set := map[string]string{`"sw1"[3]`: "SymbolErrorCounter=7", `"sw2"[3]`: "LinkDownedCounter=3",
		`"sw2"[1]`: "PortRcvErrors=12", `"sw1"[1]`: "PortXmitDiscards=5", `"sw2"[5]`: "LinkErrorRecoveryCounter=4",
		`"host1"[1]`: "PortRcvRemotePhysicalErrors=9"}
	lids := setCounters(t, fab, set)
	info, err := fab.Tool("host1", "iblinkinfo")
	if err != nil {
		t.Fatal(err)
	}
	linkinfo := parseIblinkinfo(t, info)

	checked := map[string]bool{}
	saw1X := false
	for _, src := range []string{"host1", "host4"} {
		var args []string
		for l, n := range lids {
			if n != src {
				args = append(args, "-l", strconv.Itoa(int(l)))
			}
		}
		out, errOut, code := runCLI(t, fab, src, append(args, "--pm", "--format=json")...)
		var rs []jsonWithHealth
		if err := json.Unmarshal([]byte(out), &rs); err != nil {
			t.Fatalf("%s: exit %d %v\n%s%s", src, code, err, out, errOut)
		}
		// Every ibsim link is narrower and slower than both ends support
		// (4X SDR of 12X QDR), as iblinkinfo says: exit status 1.
		if code != exitMismatch {
			t.Fatalf("%s: exit %d, want 1 (unhealthy links)\n%s", src, code, errOut)
		}
		for _, r := range rs {
			if r.Status != "ok" || r.Health == nil || len(r.Health.Links) != r.PathHops {
				t.Fatalf("%s -> %s: %s %s, health %+v", src, r.Destination, r.Status, r.Error, r.Health)
			}
			for _, l := range r.Health.Links {
				if l.Width == 1 {
					saw1X = true
				}
				for _, e := range []linkhealth.LinkEnd{l.A, l.B} {
					checked[checkLinkEnd(t, fab, linkinfo, l, e)] = true
				}
			}
		}
	}
	if !saw1X || len(checked) < 8 {
		t.Fatalf("checked %d link ends (%v), 1X link crossed: %v", len(checked), checked, saw1X)
	}
	for port, v := range set {
		key := strings.NewReplacer(`"`, "", "[", "/", "]", "").Replace(port)
		if !checked[key] {
			t.Logf("%s (%s) on no traced path", key, v)
		}
	}
	t.Logf("checked %d link ends against iblinkinfo and perfquery", len(checked))
}

// setCounters sets the PerfMgt counters of set through the ibsim console
// and waits until the last one shows; it returns the LIDs host1 knows.
func setCounters(t *testing.T, fab *ibsimtest.Fabric, set map[string]string) map[uint16]string {
	t.Helper()
	for port, v := range set {
		if err := fab.Console(`PerformanceSet ` + port + ` PortCounters.` + v); err != nil {
			t.Fatal(err)
		}
	}
	lids := allLIDs(t, fab, "host1")
	awaitPerfquery(t, fab, byName(lids)["host1"], 1, "PortRcvRemotePhysicalErrors", 9)
	return lids
}

// byName inverts allLIDs' map: node description -> LID.
func byName(lids map[uint16]string) map[string]uint16 {
	out := map[string]uint16{}
	for l, n := range lids {
		out[n] = l
	}
	return out
}

// awaitPerfquery waits until stock perfquery reads want in counter of
// port of lid: the ibsim console applies PerformanceSet asynchronously,
// in order, so once the last setting shows, all do.
func awaitPerfquery(t *testing.T, fab *ibsimtest.Fabric, lid uint16, port uint8, counter string, want uint64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for perfqueryValues(t, fab, lid, port)[counter] != want {
		if time.Now().After(deadline) {
			t.Fatalf("PerformanceSet not applied:\n%s", fab.Output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkLinkEnd compares end e of link l with iblinkinfo's line and
// perfquery's counters; it returns the end's "node description/port".
func checkLinkEnd(t *testing.T, fab *ibsimtest.Fabric, linkinfo map[string]linkinfoPort, l linkhealth.Link, e linkhealth.LinkEnd) string {
	t.Helper()
	key := e.NodeDesc + "/" + strconv.Itoa(int(e.Port))
	li, ok := linkinfo[key]
	if !ok {
		t.Fatalf("%s: no iblinkinfo line", key)
	}
	if e.WidthActive != li.width || ibsimSpeed[e.SpeedActive] != li.speed || e.State != li.state || e.PhysState != li.phys {
		t.Errorf("%s: ours %s %s %s/%s, iblinkinfo %s %s Gbps %s/%s", key, e.WidthActive, e.SpeedActive,
			e.State, e.PhysState, li.width, li.speed, li.state, li.phys)
	}
	if (li.couldWidth != "") != (l.Verdict == linkhealth.LinkWidthDegraded || l.Width != l.CouldBeWidth) ||
		(li.couldWidth != "" && li.couldWidth != strconv.Itoa(l.CouldBeWidth)+"X") {
		t.Errorf("%s: iblinkinfo could be %q, ours %dX could be %dX (%s)", key, li.couldWidth, l.Width, l.CouldBeWidth, l.Verdict)
	}
	if (li.couldSpeed != "") != (l.Speed != l.CouldBeSpeed) || (li.couldSpeed != "" && li.couldSpeed != ibsimSpeed[l.CouldBeSpeed]) {
		t.Errorf("%s: iblinkinfo could be %q Gbps, ours %s could be %s", key, li.couldSpeed, l.Speed, l.CouldBeSpeed)
	}
	pq := perfqueryValues(t, fab, e.LID, e.Port)
	if e.Counters == nil || e.Counters.State != linkhealth.CountersFirst || e.Counters.Extended {
		t.Fatalf("%s: counters %+v", key, e.Counters)
	}
	for _, n := range linkhealth.CounterNames {
		if got, want := e.Counters.Values[n], pq[n]; got != want {
			t.Errorf("%s %s: ours %d, perfquery %d", key, n, got, want)
		}
	}
	return key
}
