package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/linkhealth"
)

func healthJSON(t *testing.T, wantCode int, args ...string) []jsonWithHealth {
	t.Helper()
	lids := simLIDs(t, "fattree-mini.net")
	out, errOut, code := simCLI(t, "fattree-mini.net", "H0-0", append([]string{"-l", itoa(lids["H1-2"]), "--format=json"}, args...)...)
	var rs []jsonWithHealth
	if err := json.Unmarshal([]byte(out), &rs); err != nil || code != wantCode || len(rs) != 1 {
		t.Fatalf("%v: exit %d (want %d), %v\n%s%s", args, code, wantCode, err, out, errOut)
	}
	return rs
}

func itoa(v uint16) string { return strconv.Itoa(int(v)) }

func TestHealthCLIHealthyPath(t *testing.T) {
	rs := healthJSON(t, 0, "--pm", "--expect-width=4x", "--expect-speed=QDR")
	h := rs[0].Health
	if h == nil || !h.Healthy || len(h.Links) != 4 || h.RateBits != 40e9 || h.MTUBytes != 4096 {
		t.Fatalf("health: %+v", h)
	}
	for _, l := range h.Links {
		if l.A.Counters == nil || l.A.Counters.State != linkhealth.CountersFirst || l.Verdict != linkhealth.LinkOK {
			t.Fatalf("link %d: %+v %+v", l.Hop, l, l.A.Counters)
		}
	}
	// Without --health the JSON has no health.
	if rs := healthJSON(t, 0); rs[0].Health != nil {
		t.Fatalf("health without --health: %+v", rs[0].Health)
	}
}

func TestHealthCLIBelowExpectedExitsOne(t *testing.T) {
	rs := healthJSON(t, exitMismatch, "--expect-width=12x")
	// Status 1 for an unhealthy link; the JSON tells it from a status-7
	// mismatch: the trace's status is ok, the health is not.
	if rs[0].Status != "ok" || rs[0].Health.Healthy || rs[0].Health.DegradedLinks != 4 {
		t.Fatalf("status %s, health %+v", rs[0].Status, rs[0].Health)
	}
	lids := simLIDs(t, "fattree-mini.net")
	out, _, code := simCLI(t, "fattree-mini.net", "H0-0", "-l", itoa(lids["H1-2"]), "-v", "--expect-width=12x")
	if code != 1 || !strings.Contains(out, "health: UNHEALTHY") || strings.Count(out, "below_expected") < 4 || !strings.Contains(out, "link 4:") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestHealthCLIThresholdFileAndPMInterval(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "thresholds")
	if err := os.WriteFile(f, []byte("# limits\nSymbolErrorCounter=10\nPortRcvErrors=5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rs := healthJSON(t, 0, "--threshold-file="+f, "--pm-interval=10ms")
	for _, l := range rs[0].Health.Links {
		if l.A.Counters.State != linkhealth.CountersOK || !l.ErrorsKnown {
			t.Fatalf("two readings: link %d %+v", l.Hop, l.A.Counters)
		}
	}
	lids := simLIDs(t, "fattree-mini.net")
	for _, bad := range [][]string{{"--threshold-file=" + filepath.Join(dir, "none")}, {"--limit=Nope=1"},
		{"--expect-speed=fast"}, {"--expect-width=3x"}, {"--pm-interval=-1s"}} {
		_, errOut, code := simCLI(t, "fattree-mini.net", "H0-0", append([]string{"-l", itoa(lids["H1-2"])}, bad...)...)
		if code != exitUsage || !strings.Contains(errOut, "ibtracer: ") {
			t.Errorf("%v: exit %d, %s", bad, code, errOut)
		}
	}
}

// TestHealthCLINamesLinkEnds: --health's lines name each link's ends by
// their node-name-map name (-n), else their node description, with the
// GUID after: the summary's unhealthy links and -v's link lines.
func TestHealthCLINamesLinkEnds(t *testing.T) {
	all := simJSON(t, "fattree-mini.net", "H0-0", "--no-validate", "-l", itoa(simLIDs(t, "fattree-mini.net")["H1-2"]))
	h0, l0 := all[0].Hops[0], all[0].Hops[1]
	m := filepath.Join(t.TempDir(), "names")
	if err := os.WriteFile(m, []byte(h0.NodeGUID+" \"host-0\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lids := simLIDs(t, "fattree-mini.net")
	out, _, code := simCLI(t, "fattree-mini.net", "H0-0", "-n", m, "-l", itoa(lids["H1-2"]), "--expect-width=12x")
	first := "link 1 (host-0 {" + h0.NodeGUID + "} port 1 -> L0 {" + l0.NodeGUID + "} port 1): below_expected"
	if code != 1 || !strings.Contains(out, first) {
		t.Errorf("summary: exit %d, want %q in\n%s", code, first, out)
	}
	out, _, code = simCLI(t, "fattree-mini.net", "H0-0", "-n", m, "-l", itoa(lids["H1-2"]), "-v", "--expect-width=12x")
	line := "  link 1: host-0 {" + h0.NodeGUID + "}[1] -> L0 {" + l0.NodeGUID + "}[1] "
	if code != 1 || !strings.Contains(out, line) {
		t.Errorf("-v: exit %d, want %q in\n%s", code, line, out)
	}
	// The JSON's link ends carry the name too.
	rs := healthJSON(t, exitMismatch, "-n", m, "--expect-width=12x")
	if a := rs[0].Health.Links[0].A; a.NodeName != "host-0" {
		t.Errorf("JSON: link 1's first end %+v, want node_name host-0", a)
	}
}
