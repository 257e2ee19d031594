package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/internal/ibopen"
	"github.com/ibtracer/ibtracer_exporter/plan"
)

// planRun runs ibtracer on the simulated fattree-mini from H0-0 with
// args, degrade applied to the fabric before any MAD.
func planRun(t *testing.T, degrade func(o *ibopen.Opened), args ...string) (string, string, int) {
	t.Helper()
	onOpened = degrade
	defer func() { onOpened = nil }()
	var out, errb bytes.Buffer
	code := run(append([]string{"--ib.transport=sim", "--sim.topology=" + filepath.Join(topoDir, "fattree-mini.net"), "--sim.node=H0-0"}, args...), &out, &errb)
	return out.String(), errb.String(), code
}

func planJSON(t *testing.T, degrade func(o *ibopen.Opened), wantCode int, args ...string) jsonPlanReport {
	t.Helper()
	out, errOut, code := planRun(t, degrade, append(args, "--format=json")...)
	var doc jsonPlanReport
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != wantCode {
		t.Fatalf("%v: exit %d (want %d), %v\n%s%s", args, code, wantCode, err, out, errOut)
	}
	return doc
}

// TestPlanWriteThenAsPlanned: --write takes the plan from the traces;
// the same fabric judged against it is as planned, exit 0.
func TestPlanWriteThenAsPlanned(t *testing.T) {
	f := filepath.Join(t.TempDir(), "site.net")
	if _, errOut, code := planRun(t, nil, "--plan", f, "--write"); code != 0 || !strings.Contains(errOut, "wrote 12 links to") {
		t.Fatalf("--write: exit %d: %s", code, errOut)
	}
	doc := planJSON(t, nil, 0, "--plan", f)
	if doc.Judged != 12 || doc.Counts[plan.Planned] != 12 || doc.NotCrossed != 0 || doc.Format != "ibnetdiscover" {
		t.Fatalf("%+v", doc)
	}
	out, _, code := planRun(t, nil, "--plan", f)
	if code != 0 || strings.Contains(out, "-E-") || strings.Contains(out, "-W-") || !strings.Contains(out, "12 planned, 0 miswired, 0 below plan, 0 not in plan") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

// TestPlanBelowPlan1X: the plan says 4xQDR; the leaf-spine link L0[4]
// trains at 1X: below_plan, "1X where the plan says 4X", exit 1.
func TestPlanBelowPlan1X(t *testing.T) {
	f := filepath.Join(t.TempDir(), "site.net")
	if _, errOut, code := planRun(t, nil, "--plan", f, "--write"); code != 0 {
		t.Fatalf("--write: exit %d: %s", code, errOut)
	}
	b, _ := os.ReadFile(f)
	if !strings.Contains(string(b), "4xQDR") {
		t.Fatalf("the plan states no width:\n%s", b)
	}
	narrow := func(o *ibopen.Opened) {
		if err := o.Fabric.SetLinkWidth("L0", 1, true); err != nil { // H0-0's own link: every path crosses it
			t.Error(err)
		}
	}
	doc := planJSON(t, narrow, exitMismatch, "--plan", f)
	if doc.Counts[plan.BelowPlan] != 1 || doc.Counts[plan.Planned] != 11 {
		t.Fatalf("%+v", doc.Counts)
	}
	l := doc.Links[0] // worst first
	if l.Status != plan.BelowPlan || l.Width != 1 || l.Why != "1X where the plan says 4X" || l.Planned == nil || l.Planned.Width != 4 {
		t.Fatalf("%+v", l)
	}
	out, _, code := planRun(t, narrow, "--plan", f)
	if code != exitMismatch || !strings.Contains(out, `-W- below_plan: "H0-0"[1] -> "L0"[1]: 1X where the plan says 4X`) {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

// TestPlanMiswiredOnSim: the plan is fattree-mini.net; the fabric has
// H0-1 and H0-2 swapped on L0. Every difference names the planned end.
func TestPlanMiswiredOnSim(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join(topoDir, "fattree-mini.net"))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.NewReplacer("[2]\t\"H0-1\"[1]", "[2]\t\"H0-2\"[1]", "[3]\t\"H0-2\"[1]", "[3]\t\"H0-1\"[1]",
		"\"H0-1\"\n[1]\t\"L0\"[2]", "\"H0-1\"\n[1]\t\"L0\"[3]", "\"H0-2\"\n[1]\t\"L0\"[3]", "\"H0-2\"\n[1]\t\"L0\"[2]").Replace(string(b))
	topo := filepath.Join(dir, "swapped.net")
	if err := os.WriteFile(topo, []byte(s), 0o644); err != nil || s == string(b) {
		t.Fatalf("%v: %s", err, s)
	}
	var out, errb bytes.Buffer
	code := run([]string{"--ib.transport=sim", "--sim.topology=" + topo, "--sim.node=H0-0", "--plan", filepath.Join(topoDir, "fattree-mini.net")}, &out, &errb)
	want := []string{
		`-E- miswired: "L0"[2] -> "H0-2"[1]: "L0"[2] should go to "H0-1"[1]; "H0-2"[1] should go to "L0"[3]`,
		`-E- miswired: "L0"[3] -> "H0-1"[1]: "L0"[3] should go to "H0-2"[1]; "H0-1"[1] should go to "L0"[2]`,
		"10 planned, 2 miswired, 0 below plan, 0 not in plan",
	}
	for _, w := range want {
		if !strings.Contains(out.String(), w) {
			t.Errorf("missing %q", w)
		}
	}
	if code != exitMismatch || t.Failed() {
		t.Fatalf("exit %d:\n%s%s", code, out.String(), errb.String())
	}
}

func TestPlanUsage(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.net")
	if err := os.WriteFile(bad, []byte("Switch 4 \"S0\"\n[1] \"L0\"[1]\n[1] \"L1\"[1]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--write"}, "--write writes the plan --plan FILE names"},
		{[]string{"--plan", bad}, "--plan: " + bad + ":3: port 1 of \"S0\" is cabled again (first at line 2)"},
		{[]string{"--plan", bad + ".none"}, "no such file"},
		{[]string{"--plan", bad, "--lmc-all"}, "--plan does not combine with --lmc-all"},
		{[]string{"--plan", bad, "-m", "0xc001", "1"}, "--plan does not combine with -m"},
	} {
		_, errOut, code := planRun(t, nil, c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q; want %q", c.args, code, errOut, c.want)
		}
	}
}
