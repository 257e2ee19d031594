package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/trace"
)

// simAll runs `ibtracer --all --format=json` on the in-process simulated
// fattree-128 with the given --sim.agents and extra flags, and returns its
// results.
func simAll(t *testing.T, agents string, extra ...string) []trace.JSONResult {
	t.Helper()
	args := append([]string{"--ib.transport=sim", "--sim.topology=" + filepath.Join(topoDir, "fattree-128.net"),
		"--sim.agents=" + agents, "--all", "--format=json", "-t", "200"}, extra...)
	var out, errb bytes.Buffer
	if code := run(args, &out, &errb); code != exitOK {
		t.Fatalf("ibtracer %v: exit %d\n%s", args, code, errb.String())
	}
	var rs []trace.JSONResult
	if err := json.Unmarshal(out.Bytes(), &rs); err != nil {
		t.Fatal(err)
	}
	if len(rs) != 127 {
		t.Fatalf("%d results, want 127", len(rs))
	}
	return rs
}

// TestAllValidatedBySMAWithoutAgents: with the vendor agent on no node of
// the in-process fattree-128 (whose switches answer LID-routed SMPs with
// the port they arrived on, as real switches do), `ibtracer --all`
// validates every hop of every path, by the SMA, by default (auto).
func TestAllValidatedBySMAWithoutAgents(t *testing.T) {
	for _, r := range simAll(t, "none") {
		for _, h := range r.Hops[1:] {
			if !trace.AgentStatus(h.Verdict).AsPredicted() || h.AgentStatus != h.Verdict || h.ValidatedBy != "sma" ||
				h.ActualInPort == nil || h.ExpectedInPort == nil || *h.ActualInPort != *h.ExpectedInPort {
				t.Fatalf("%s hop %d %s: verdict %q agent_status %q validated_by %q; want validated by sma",
					r.Destination, h.Hop, h.NodeDesc, h.Verdict, h.AgentStatus, h.ValidatedBy)
			}
		}
	}
}

// TestAllValidatedWithAgentsOnSwitchesOnly: --sim.agents=0% puts the
// agent on every switch and no host: in auto mode the switches are
// validated by their agent, the hosts by their SMA; every hop validated.
func TestAllValidatedWithAgentsOnSwitchesOnly(t *testing.T) {
	for _, r := range simAll(t, "0%") {
		for _, h := range r.Hops[1:] {
			want := "agent"
			if h.NodeType != "switch" {
				want = "sma"
			}
			if !trace.AgentStatus(h.Verdict).AsPredicted() || h.ValidatedBy != want {
				t.Fatalf("%s hop %d %s: %q by %q, want validated by %s", r.Destination, h.Hop, h.NodeDesc, h.Verdict, h.ValidatedBy, want)
			}
		}
	}
}

// TestSimSwitchSMAIbsim: --sim.switch-sma=ibsim makes the simulated
// switches answer LocalPortNum 0 as ibsim's do: switch hops are
// ingress_unknown by the SMA, CA hops still validated.
func TestSimSwitchSMAIbsim(t *testing.T) {
	for _, r := range simAll(t, "none", "--sim.switch-sma=ibsim", "--validate=sma") {
		for _, h := range r.Hops[1:] {
			want := "validated"
			if h.NodeType == "switch" {
				want = "ingress_unknown"
			}
			if h.Verdict != want || h.ValidatedBy != "sma" {
				t.Fatalf("%s hop %d %s: %q by %q, want %s by sma", r.Destination, h.Hop, h.NodeDesc, h.Verdict, h.ValidatedBy, want)
			}
		}
	}
}
