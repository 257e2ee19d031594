package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/plan"
)

// leafSpine2x2 is two leaves of four hosts, each leaf cabled to each of
// two spines once: every path between the leaves crosses a leaf-spine
// cable at L1, and OpenSM spreads L1's four hosts over both.
const leafSpine2x2 = `Switch	4 "S0"
[1]	"L0"[5]
[2]	"L1"[5]

Switch	4 "S1"
[1]	"L0"[6]
[2]	"L1"[6]

Switch	6 "L0"
[1]	"H0-0"[1]
[2]	"H0-1"[1]
[3]	"H0-2"[1]
[4]	"H0-3"[1]
[5]	"S0"[1]
[6]	"S1"[1]

Switch	6 "L1"
[1]	"H1-0"[1]
[2]	"H1-1"[1]
[3]	"H1-2"[1]
[4]	"H1-3"[1]
[5]	"S0"[2]
[6]	"S1"[2]
`

func leafSpineTopology(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(leafSpine2x2)
	for l := 0; l < 2; l++ {
		for h := 0; h < 4; h++ {
			fmt.Fprintf(&b, "\nHca\t1\t\"H%d-%d\"\n[1]\t\"L%d\"[%d]\n", l, h, l, h+1)
		}
	}
	f := filepath.Join(t.TempDir(), "leafspine.net")
	if err := os.WriteFile(f, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

var (
	diffHeaderRe = regexp.MustCompile(`^(Switch|Ca|Hca|Rt)\s+\d+\s+"[^"]*"\s*#\s*"([^"]*)"`)
	diffPortRe   = regexp.MustCompile(`^([<>]) \[(\d+)\](?:\([0-9a-f]+\))?\s+"[^"]*"\[(\d+)\](?:\([0-9a-f]+\))?\s*#.*?"([^"]*)"`)
)

// diffChanges reads ibnetdiscover --diff's output: under each node's
// header, a "<" line is a port as the cache had it, a ">" line as it is
// now. Each change is "NODE[PORT]: was REMOTE[PORT], now REMOTE[PORT]".
func diffChanges(t *testing.T, out string) []string {
	t.Helper()
	was, now := map[string]string{}, map[string]string{}
	node := ""
	for _, l := range strings.Split(out, "\n") {
		if m := diffHeaderRe.FindStringSubmatch(l); m != nil {
			node = m[2]
			continue
		}
		m := diffPortRe.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		end, remote := fmt.Sprintf("%s[%s]", node, m[2]), fmt.Sprintf("%s[%s]", m[4], m[3])
		if m[1] == "<" {
			was[end] = remote
		} else {
			now[end] = remote
		}
	}
	var out2 []string
	for end, w := range was {
		out2 = append(out2, fmt.Sprintf("%s: was %s, now %s", end, w, now[end]))
	}
	sort.Strings(out2)
	return out2
}

// planChanges reads ibtracer --plan's JSON the same way: each end of a
// miswired link that should go elsewhere.
func planChanges(doc jsonPlanReport) []string {
	var out []string
	for _, l := range doc.Links {
		if l.Status != plan.Miswired {
			continue
		}
		for _, e := range []struct {
			near, far jsonPlanEnd
			want      *jsonPlanEnd
		}{{l.A, l.B, l.WantA}, {l.B, l.A, l.WantB}} {
			if e.want != nil {
				out = append(out, fmt.Sprintf("%s[%d]: was %s[%d], now %s[%d]", e.near.Node, e.near.Port, e.want.Node, e.want.Port, e.far.Node, e.far.Port))
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestPlanSwappedCablesAsIBNetDiscoverDiff is the oracle of issue 44: the
// plan taken with ibnetdiscover (and its --cache), two leaf-spine cables
// swapped on ibsim's console, then ibnetdiscover --diff and ibtracer
// --plan --all name the same cables, port for port.
func TestPlanSwappedCablesAsIBNetDiscoverDiff(t *testing.T) {
	fab := ibsimtest.Start(t, leafSpineTopology(t), ibsimtest.Options{})
	planFile, cache := filepath.Join(fab.Dir, "plan.net"), filepath.Join(fab.Dir, "plan.cache")
	out, err := fab.Tool("H0-0", "ibnetdiscover", "--cache", cache)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(planFile, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	judge := func(wantCode int) (jsonPlanReport, string) {
		t.Helper()
		jout, errOut, code := runCLI(t, fab, "H0-0", "--plan", planFile, "--all", "--no-validate", "--format=json")
		var doc jsonPlanReport
		if err := json.Unmarshal([]byte(jout), &doc); err != nil || code != wantCode {
			t.Fatalf("exit %d (want %d), %v\n%s%s", code, wantCode, err, jout, errOut)
		}
		text, _, _ := runCLI(t, fab, "H0-0", "--plan", planFile, "--all", "--no-validate")
		return doc, text
	}
	// As planned: nothing to say.
	if doc, text := judge(0); doc.Counts[plan.Planned] != doc.Judged || doc.Judged < 9 {
		t.Fatalf("as planned: %+v\n%s", doc.Counts, text)
	}
	for _, c := range []string{`Unlink "L1"[5]`, `Unlink "L1"[6]`, `Link "L1"[5] "S1"[2]`, `Link "L1"[6] "S0"[2]`} {
		if err := fab.Console(c); err != nil {
			t.Fatal(err)
		}
	}
	fab.StartSM() // one sweep: the relinked ports Active again
	diff, err := fab.Tool("H0-0", "ibnetdiscover", "--diff", cache)
	if err != nil {
		t.Fatal(err)
	}
	doc, text := judge(exitMismatch)
	want, all := diffChanges(t, diff), planChanges(doc)
	t.Logf("ibnetdiscover --diff:\n%s\nibtracer --plan:\n%s", diff, text)
	// ibnetdiscover --diff names a port whose remote node changed; the
	// spines' ports, still cabled to L1 but at the other port, it does
	// not name. ibtracer names them too: compared alike, the ends whose
	// remote node changed are the same, port for port.
	var got []string
	for _, c := range all {
		var near, wasNode, nowNode string
		var port, wasPort, nowPort int
		if _, err := fmt.Sscanf(strings.NewReplacer("[", " ", "]", " ", ",", " ").Replace(c), "%s %d : was %s %d now %s %d", &near, &port, &wasNode, &wasPort, &nowNode, &nowPort); err != nil {
			t.Fatalf("%q: %v", c, err)
		}
		if wasNode != nowNode {
			got = append(got, c)
		}
	}
	if len(want) != 2 || strings.Join(want, "\n") != strings.Join(got, "\n") || len(all) != 4 {
		t.Fatalf("ibnetdiscover --diff names:\n%s\nibtracer --plan names:\n%s", strings.Join(want, "\n"), strings.Join(all, "\n"))
	}
	if doc.Counts[plan.Miswired] != 2 || doc.Counts[plan.NotInPlan] != 0 || doc.Counts[plan.BelowPlan] != 0 {
		t.Fatalf("counts %+v\n%s", doc.Counts, text)
	}
	// --via L1:5: the paths over that cable; it is named, the other not.
	via, errOut, code := runCLI(t, fab, "H0-0", "--plan", planFile, "--via", "L1:5", "--no-validate")
	if code != exitMismatch || !strings.Contains(via, `-E- miswired: "S1"[2] -> "L1"[5]: "S1"[2] should go to "L1"[6]; "L1"[5] should go to "S0"[2]`) ||
		strings.Contains(via, `"L1"[6]:`) || strings.Count(via, "-E-") != 1 {
		t.Fatalf("--via L1:5: exit %d\n%s%s", code, via, errOut)
	}
}

// TestPlanBelowPlanOnIBSim: the plan is ibnetdiscover's output of the
// fabric as built (4xSDR everywhere); in a fabric where H1-3's cable is
// enabled for 1X only (ibsim's w=1), that link is below the plan.
func TestPlanBelowPlanOnIBSim(t *testing.T) {
	topo := leafSpineTopology(t)
	good := ibsimtest.Start(t, topo, ibsimtest.Options{})
	out, err := good.Tool("H0-0", "ibnetdiscover")
	if err != nil {
		t.Fatal(err)
	}
	planFile := filepath.Join(good.Dir, "plan.net")
	if err := os.WriteFile(planFile, []byte(out), 0o644); err != nil || !strings.Contains(out, "4xSDR") {
		t.Fatalf("%v\n%s", err, out)
	}
	b, _ := os.ReadFile(topo)
	narrow := filepath.Join(t.TempDir(), "narrow.net")
	s := strings.NewReplacer("[4]\t\"H1-3\"[1]", "[4]\t\"H1-3\"[1] w=1", // ibsim wants w= at both ends
		"\"H1-3\"\n[1]\t\"L1\"[4]", "\"H1-3\"\n[1]\t\"L1\"[4] w=1").Replace(string(b))
	if err := os.WriteFile(narrow, []byte(s), 0o644); err != nil || s == string(b) {
		t.Fatal(err)
	}
	fab := ibsimtest.Start(t, narrow, ibsimtest.Options{})
	text, errOut, code := runCLI(t, fab, "H0-0", "--plan", planFile, "--all", "--no-validate")
	if code != exitMismatch || !strings.Contains(text, `-W- below_plan: "L1"[4] -> "H1-3"[1]: 1X where the plan says 4X`) ||
		!strings.Contains(text, "11 planned, 0 miswired, 1 below plan, 0 not in plan") {
		t.Fatalf("exit %d\n%s%s", code, text, errOut)
	}
}
