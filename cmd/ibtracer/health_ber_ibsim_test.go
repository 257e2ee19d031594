package main

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/linkhealth"
)

// perfqueryFlag runs perfquery FLAG LID PORT and reads its counters.
func perfqueryFlag(t *testing.T, fab *ibsimtest.Fabric, flag string, lid uint16, port uint8) map[string]uint64 {
	t.Helper()
	out, err := fab.Tool("host1", "perfquery", flag, strconv.Itoa(int(lid)), strconv.Itoa(int(port)))
	if err != nil {
		t.Fatalf("perfquery %s %d %d: %v\n%s", flag, lid, port, err, out)
	}
	return ibsimtest.PerfqueryCounters(out)
}

// TestHealthDetailsMatchPerfquery is the oracle of ibtracer --health --pm
// for the attributes beyond PortCounters: on ibsim, with counters set by
// the console's PerformanceSet, every link end's PortCountersExtended
// data counters equal perfquery -x's, and where PortRcvErrors or
// PortXmitDiscards is not 0, its PortRcvErrorDetails and
// PortXmitDiscardDetails equal perfquery -E's and -D's, field for field.
func TestHealthDetailsMatchPerfquery(t *testing.T) {
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "health.net"), ibsimtest.Options{})
	for _, c := range []string{
		`"sw2"[1] PortCounters.PortRcvErrors=12`, `"sw2"[1] PortRcvErrorDetails.PortLocalPhysicalErrors=5`,
		`"sw2"[1] PortRcvErrorDetails.PortMalformedPacketErrors=4`, `"sw2"[1] PortRcvErrorDetails.PortLoopingErrors=3`,
		`"sw1"[1] PortCounters.PortXmitDiscards=5`, `"sw1"[1] PortXmitDiscardDetails.PortInactiveDiscards=2`,
		`"sw1"[1] PortXmitDiscardDetails.PortSwHOQLifetimeLimitDiscards=3`,
		`"sw1"[3] PortCountersExtended.PortXmitData=123456789012`,
		`"host1"[1] PortCounters.PortRcvRemotePhysicalErrors=9`,
	} {
		if err := fab.Console("PerformanceSet " + c); err != nil {
			t.Fatal(err)
		}
	}
	lids := allLIDs(t, fab, "host1")
	awaitPerfquery(t, fab, byName(lids)["host1"], 1, "PortRcvRemotePhysicalErrors", 9)
	var args []string
	for l, n := range lids {
		if n != "host1" {
			args = append(args, "-l", strconv.Itoa(int(l)))
		}
	}
	// ibsim counts every MAD a port passes, ours and perfquery's: the
	// data counters are read by perfquery before and after our run, and
	// ours must lie between (equal where nothing moved them).
	ends := healthEnds(t, fab, args)
	pre := map[string]map[string]uint64{}
	for key, e := range ends {
		pre[key] = perfqueryFlag(t, fab, "-x", e.LID, e.Port)
	}
	ends = healthEnds(t, fab, args)
	for key, e := range ends {
		compareDetails(t, fab, key, e, pre[key])
	}
	for _, k := range []string{"sw2/1", "sw1/1", "sw1/3"} {
		if _, ok := ends[k]; !ok {
			t.Errorf("%s, with counters set, on no traced path (%d ends seen)", k, len(ends))
		}
	}
	if got := ends["sw1/3"].Counters.Data; got["PortXmitData"] < 123456789012 {
		t.Errorf("sw1/3: the counters PerformanceSet set read %v", got)
	}
}

// healthEnds runs ibtracer --pm --format=json from host1 with args and
// returns every link end of its paths by "node description/port".
func healthEnds(t *testing.T, fab *ibsimtest.Fabric, args []string) map[string]linkhealth.LinkEnd {
	t.Helper()
	out, errOut, code := runCLI(t, fab, "host1", append(args, "--pm", "--format=json")...)
	var rs []jsonWithHealth
	if err := json.Unmarshal([]byte(out), &rs); err != nil {
		t.Fatalf("exit %d %v\n%s%s", code, err, out, errOut)
	}
	ends := map[string]linkhealth.LinkEnd{}
	for _, r := range rs {
		if r.Health == nil {
			t.Fatalf("%s: no health", r.Destination)
		}
		for _, l := range r.Health.Links {
			for _, e := range []linkhealth.LinkEnd{l.A, l.B} {
				ends[e.NodeDesc+"/"+strconv.Itoa(int(e.Port))] = e
			}
		}
	}
	return ends
}

// compareDetails compares one end's extended counters with perfquery -x
// (pre: before our run; the traffic counters may move between) and its
// details with perfquery -E and -D.
func compareDetails(t *testing.T, fab *ibsimtest.Fabric, key string, e linkhealth.LinkEnd, pre map[string]uint64) {
	t.Helper()
	c := e.Counters
	if c == nil || c.Data == nil {
		t.Fatalf("%s: no extended data counters: %+v", key, c)
	}
	post := perfqueryFlag(t, fab, "-x", e.LID, e.Port)
	for n, v := range c.Data {
		lo, ok1 := pre[n]
		hi, ok2 := post[n]
		if !ok1 || !ok2 || v < lo || v > hi {
			t.Errorf("%s %s: ours %d, perfquery -x %d before and %d after", key, n, v, lo, hi)
		}
	}
	if len(c.Data) != 8 {
		t.Errorf("%s: %d data counters, want 8", key, len(c.Data))
	}
	for _, d := range []struct {
		flag  string
		ours  map[string]uint64
		basic string
		names []string
	}{{"-E", c.RcvErrorDetails, "PortRcvErrors", linkhealth.RcvErrorDetailNames[:]},
		{"-D", c.XmitDiscardDetails, "PortXmitDiscards", linkhealth.XmitDiscardDetailNames[:]}} {
		if (c.Values[d.basic] > 0) != (d.ours != nil) {
			t.Errorf("%s: %s %d, details read: %v", key, d.basic, c.Values[d.basic], d.ours != nil)
		}
		if d.ours == nil {
			continue
		}
		pq := perfqueryFlag(t, fab, d.flag, e.LID, e.Port)
		for _, n := range d.names {
			if w, ok := pq[n]; !ok || w != d.ours[n] {
				t.Errorf("%s %s: ours %d, perfquery %s %d (present %v)", key, n, d.ours[n], d.flag, w, ok)
			}
		}
	}
}

// TestBERWindowOnIbsim: ibtracer --ber WINDOW reads twice, WINDOW apart.
// With SymbolErrorCounter raised by PerformanceSet at one end within the
// window, that link is above the target, named by that end; the links
// without errors are ok, the window being long enough for the target.
// A window too short for the default 1e-12 (100 s at ibsim's 4X SDR)
// leaves every link not yet known, never ok.
func TestBERWindowOnIbsim(t *testing.T) {
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "health.net"), ibsimtest.Options{})
	lids := byName(allLIDs(t, fab, "host1"))
	dst := []string{"-l", strconv.Itoa(int(lids["host4"]))}
	run := func(extra ...string) []jsonWithHealth {
		out, errOut, code := runCLI(t, fab, "host1", append(append(dst, "--format=json"), extra...)...)
		var rs []jsonWithHealth
		if err := json.Unmarshal([]byte(out), &rs); err != nil || len(rs) != 1 || rs[0].Health == nil {
			t.Fatalf("exit %d %v\n%s%s", code, err, out, errOut)
		}
		return rs
	}
	for _, l := range run("--ber", "1s")[0].Health.Links {
		if l.BERState != linkhealth.BERNotYetKnown || l.BERTarget != 1e-12 {
			t.Fatalf("1 s window, 1e-12 target: link %d BER %q target %g", l.Hop, l.BERState, l.BERTarget)
		}
	}
	links := run("--pm")[0].Health.Links
	if len(links) < 2 {
		t.Fatalf("path to host4: %d links", len(links))
	}
	bad := links[1].B // the ingress port of hop 2
	done := make(chan []jsonWithHealth, 1)
	go func() { done <- run("--ber", "6s", "--ber-target", "1e-9") }()
	time.Sleep(2 * time.Second)
	if err := fab.Console(`PerformanceSet "` + bad.NodeDesc + `"[` + strconv.Itoa(int(bad.Port)) + `] PortCounters.SymbolErrorCounter=100`); err != nil {
		t.Fatal(err)
	}
	rs := <-done
	for _, l := range rs[0].Health.Links {
		want := linkhealth.BEROK
		if l.Hop == links[1].Hop {
			want = linkhealth.BERAboveTarget
			if l.BEREnd != "b" || l.B.Counters.BER.SymbolErrors != 100 || l.Healthy {
				t.Errorf("link %d: end %q, b's %+v, healthy %v", l.Hop, l.BEREnd, l.B.Counters.BER, l.Healthy)
			}
		}
		if l.BERState != want || l.BERWindowSeconds < 5.5 {
			t.Errorf("link %d: BER %q (%g over %.1f s), want %s", l.Hop, l.BERState, l.BER, l.BERWindowSeconds, want)
		}
	}
}
