package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// resultWith is an ok trace to lid whose hops after the source carry the
// given verdicts.
func resultWith(lid uint16, verdicts ...trace.AgentStatus) *trace.Result {
	r := &trace.Result{Destination: trace.Destination{LID: lid}, DLID: lid, Status: trace.StatusOK, MADs: 10}
	r.Hops = append(r.Hops, trace.Hop{Hop: 0, Agent: trace.AgentSource})
	for i, v := range verdicts {
		r.Hops = append(r.Hops, trace.Hop{Hop: i + 1, Agent: v})
	}
	return r
}

// countWords reads "N word" pairs of a line's hop counts: "validated",
// "not validated", "unsupported", "lost", "ingress unknown", "not asked".
var countWords = regexp.MustCompile(`(\d+) (not validated|validated|unsupported|lost|ingress unknown|not asked)\b`)

func hopCounts(line string) map[string]int {
	m := map[string]int{}
	for _, g := range countWords.FindAllStringSubmatch(line, -1) {
		n, _ := strconv.Atoi(g[1])
		m[g[2]] += n
	}
	return m
}

// TestTotalsCountWhatTheLinesCount: --all's totals count the hops of the
// ok traces with the words and categories the per-destination lines use,
// so that they add up: a lost hop is not validated on its line and in the
// totals alike (it once showed as "without agent" on its line and not at
// all in the totals' "unsupported hops").
func TestTotalsCountWhatTheLinesCount(t *testing.T) {
	rs := []*trace.Result{
		resultWith(10, trace.AgentUnsupported, trace.AgentLost, trace.AgentValidated),
		resultWith(11, trace.AgentLost, trace.AgentLost, trace.AgentIngressUnknown, trace.AgentValidated),
		resultWith(12, trace.AgentValidated),
		{Destination: trace.Destination{LID: 13}, Status: trace.StatusUnreachable, Reason: trace.ReasonNoRoute, Err: errors.New("no route"),
			Hops: []trace.Hop{{Agent: trace.AgentSource}, {Hop: 1, Agent: trace.AgentNotAsked}}},
	}
	rs[1].SharedFacts = 4
	out := output{n: len(rs), totals: rs, mads: runMADs{sent: 45, health: 5}, json: func() any { return nil },
		verbose: func(io.Writer, int) {},
		summary: func(w io.Writer, i int) { fmt.Fprintln(w, rs[i].Summary()) }}
	var stdout, stderr bytes.Buffer
	if !out.print(&options{all: true}, &stdout, &stderr) {
		t.Fatal(stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d lines:\n%s", len(lines), stdout.String())
	}
	sum := map[string]int{}
	for _, l := range lines[:4] {
		for k, v := range hopCounts(l) {
			sum[k] += v
		}
	}
	totals := lines[4]
	if got := hopCounts(totals); fmt.Sprint(got) != fmt.Sprint(sum) {
		t.Fatalf("totals count %v, the lines %v:\n%s", got, sum, stdout.String())
	}
	if want := "lid 10: ok: 3 hops, 1 validated, 2 not validated (1 unsupported, 1 lost), 1/3 links confirmed (33%), 10 MADs"; !strings.HasPrefix(lines[0], want) {
		t.Fatalf("line %q, want it to begin %q", lines[0], want)
	}
	if want := "lid 11: ok: 4 hops, 1 validated, 3 not validated (2 lost, 1 ingress unknown), 1/4 links confirmed (25%), 10 MADs"; !strings.HasPrefix(lines[1], want) {
		t.Fatalf("line %q, want it to begin %q", lines[1], want)
	}
	if want := "totals: 4 traced, 3 ok, 0 mismatches, 1 unreachable; hops of the ok traces: 8, 3 validated, 5 not validated (1 unsupported, 3 lost, 1 ingress unknown); 3/8 links confirmed (38%); MADs: 45 sent (30 by the traces, 5 by the link health checks, 10 by the rest of the run), 4 facts shared rather than asked"; totals != want {
		t.Fatalf("totals %q, want %q", totals, want)
	}
}

// TestMADsOfARun: who sent a run's MADs, as the totals line says it; the
// traces' own count is never made to look like the run's.
func TestMADsOfARun(t *testing.T) {
	for _, tc := range []struct {
		m      runMADs
		traces int
		want   string
	}{
		{runMADs{sent: 783}, 629, "629 by the traces, 154 by the rest of the run"},
		{runMADs{sent: 629}, 629, "629 by the traces, 0 by the rest of the run"},
		{runMADs{sent: 800, health: 17}, 629, "629 by the traces, 17 by the link health checks, 154 by the rest of the run"},
		{runMADs{sent: 600}, 629, "the traces count 629"},
	} {
		if got := madsOf(tc.m, tc.traces); got != tc.want {
			t.Errorf("madsOf(%+v, %d) = %q, want %q", tc.m, tc.traces, got, tc.want)
		}
	}
}

// TestAllTotalsOnIbsim: against ibsim and OpenSM, where a node without an
// agent makes its hop lost (ibsim answers no "no such class"), --all's
// lines and totals count the same hops: the lost ones show in both.
func TestAllTotalsOnIbsim(t *testing.T) {
	ibsimtest.Require(t)
	// OpenSM runs on host1, the traces' own source: --all sends
	// validation MADs to every other CA and the switches on their paths,
	// and OpenSM under libumad2sim crashes on a vendor MAD that reaches
	// its own node (docs/architecture.md, "Testing against independent
	// sources").
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "two-switch.net"), ibsimtest.Options{KeepSM: true, SMNode: "host1"})
	startAgents(t, fab, false, "host3")
	out, errOut, code := runCLI(t, fab, "host1", "--all", "--timeout=200", "--validate=agent") // auto would ask the SMAs
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) < 2 || !strings.HasPrefix(lines[len(lines)-1], "totals: ") {
		t.Fatalf("exit %d:\n%s%s", code, out, errOut)
	}
	sum := map[string]int{}
	for _, l := range lines[:len(lines)-1] {
		for k, v := range hopCounts(l) {
			sum[k] += v
		}
	}
	totals := hopCounts(lines[len(lines)-1])
	if fmt.Sprint(totals) != fmt.Sprint(sum) || totals["lost"] == 0 || totals["validated"] == 0 {
		t.Fatalf("totals count %v, the lines %v (want some lost and some validated hops):\n%s", totals, sum, out)
	}
	t.Logf("%s", lines[len(lines)-1])
}
