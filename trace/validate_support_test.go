package trace

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/agent"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/internal/fakeclock"
)

// newFakeClock is a clock tests move by hand (internal/fakeclock).
func newFakeClock() *fakeclock.Clock { return fakeclock.New(time.Unix(1_700_000_000, 0)) }

// TestLostMADIsNotNoAgent: an agent that drops a request (its rate limit)
// is "lost" for that trace and asked again by the next one; only an
// explicit "no such class" answer makes a hop "unsupported" (issue 9,
// defect 5).
func TestLostMADIsNotNoAgent(t *testing.T) {
	s := loadSim(t, "chain-5.net", sim.Options{})
	clock := newFakeClock()
	// hostB's agent answers 2 requests per source, then one per second of
	// its (hand-moved) clock.
	tp, err := s.f.Attach("hostB", 0)
	if err != nil {
		t.Fatal(err)
	}
	ae := ibmad.NewEngine(tp, ibmad.Options{})
	t.Cleanup(func() { ae.Close() })
	if _, err := agent.New(ae, agent.Config{RatePerSource: 1, Burst: 2, Clock: clock}); err != nil {
		t.Fatal(err)
	}
	tr := s.tracer("hostA", Options{Validate: ValidateAgent, Timeout: 250 * time.Millisecond, Retries: new(0)})
	d := Destination{LID: s.lid("hostB")}
	ctx := context.Background()
	last := func(r *Result) AgentStatus { return r.Hops[len(r.Hops)-1].Agent }

	// Empty hostA's bucket from another port handle of hostA (same LID).
	drain := s.tracer("hostA", Options{Timeout: 250 * time.Millisecond, Retries: new(0)})
	for i := 0; i < 2; i++ {
		if r := drain.Trace(ctx, d); r.Status != StatusOK {
			t.Fatalf("drain: %s %v", r.Status, r.Err)
		}
	}
	// ClassPortInfo is dropped: lost, not unsupported.
	r := tr.Trace(ctx, d)
	if r.Status != StatusOK || last(r) != AgentLost {
		t.Fatalf("ClassPortInfo dropped: %s, last hop %q (want ok, lost)", r.Status, last(r))
	}
	// The agent has tokens again: the next trace asks again and validates.
	clock.Add(2 * time.Second)
	if r = tr.Trace(ctx, d); r.Status != StatusOK || last(r) != AgentValidated {
		t.Fatalf("after the drop: %s, last hop %q (want validated)", r.Status, last(r))
	}
	// SourceRoute dropped (fast path, then the walk): lost, not remembered.
	if r = tr.Trace(ctx, d); r.Status != StatusOK || last(r) != AgentLost {
		t.Fatalf("SourceRoute dropped: %s, last hop %q (want ok, lost)", r.Status, last(r))
	}
	clock.Add(2 * time.Second)
	if r = tr.Trace(ctx, d); r.Status != StatusOK || last(r) != AgentValidated {
		t.Fatalf("after the SourceRoute drop: %s, last hop %q (want validated)", r.Status, last(r))
	}
	// hostC has no agent: the kernel's 0x000C makes it unsupported.
	if r = tr.Trace(ctx, Destination{LID: s.lid("hostC")}); r.Status != StatusOK || last(r) != AgentUnsupported {
		t.Fatalf("no agent: %s, last hop %q (want unsupported)", r.Status, last(r))
	}
}

// TestVerdictsAreNeverEmpty: without validation every hop says not_asked;
// a failed trace's hops say not_asked where the agents were not asked, in
// the text and JSON reports alike.
func TestVerdictsAreNeverEmpty(t *testing.T) {
	s := loadSim(t, "chain-5.net", sim.Options{})
	s.agentOn("hostB")
	hostB := s.lid("hostB")
	ctx := context.Background()
	r := s.tracer("hostA", Options{Validate: ValidateOff}).Trace(ctx, Destination{LID: hostB})
	if r.Status != StatusOK {
		t.Fatalf("--no-validate: %s %v", r.Status, r.Err)
	}
	for _, h := range r.Hops[1:] {
		if h.Agent != AgentStatus("not_asked") {
			t.Fatalf("--no-validate: hop %d says %q, want not_asked", h.Hop, h.Agent)
		}
	}
	if sum := r.Summary(); !strings.Contains(sum, "not validated") {
		t.Fatalf("--no-validate summary: %s", sum)
	}
	if err := s.f.SetLFTEntry("s4", hostB, ibmad.LFTNoRoute); err != nil {
		t.Fatal(err)
	}
	failed := s.tracer("hostA", Options{}).Trace(ctx, Destination{LID: hostB})
	if failed.Status != StatusUnreachable || len(failed.Hops) < 2 {
		t.Fatalf("dead end: %s, %d hops", failed.Status, len(failed.Hops))
	}
	for _, r := range []*Result{r, failed} {
		var text bytes.Buffer
		r.WriteVerbose(&text)
		if m := regexp.MustCompile(`(?m)agent *$`).FindString(text.String()); m != "" {
			t.Fatalf("%s: empty verdict in the text report:\n%s", r.Status, text.String())
		}
		js, err := json.Marshal(r.JSON())
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(js, []byte(`"agent_status":""`)) {
			t.Fatalf("%s: empty verdict in the JSON report: %s", r.Status, js)
		}
	}
}
