package trace

import (
	"context"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// BenchmarkValidationCost traces every CA of fattree-128 (in the
// in-process simulator) from H0-0, round and round, and reports the MADs
// per trace and per hop, and the LID-routed SMPs (the SMA's) per hop, for
// each way of validating: off; sma and auto with no agent anywhere (a
// real fabric: switches never run one); agent with agents everywhere (the
// demo). "cold" builds a new tracer for every trace (no cache); "shared"
// is the exporter's steady state (fast path, verdicts and LFT blocks
// shared for 10 s).
func BenchmarkValidationCost(b *testing.B) {
	for _, tc := range []struct {
		name   string
		mode   ValidateMode
		agents bool
	}{
		{"off", ValidateOff, false},
		{"sma", ValidateSMA, false},
		{"auto-no-agents", ValidateAuto, false},
		{"agent-everywhere", ValidateAgent, true},
	} {
		for _, cold := range []bool{true, false} {
			name := tc.name + "/shared"
			if cold {
				name = tc.name + "/cold"
			}
			b.Run(name, func(b *testing.B) { benchValidation(b, tc.mode, tc.agents, cold) })
		}
	}
}

func benchValidation(b *testing.B, mode ValidateMode, agents, cold bool) {
	s := loadSim(b, "fattree-128.net", sim.Options{})
	s.rate = 1e9
	if agents {
		s.agentsEverywhere()
	}
	o := Options{Validate: mode}
	if !cold {
		o.ShareValidation = 10 * time.Second
	}
	lids := s.f.CALIDs()[1:] // not H0-0 itself
	ctx := context.Background()
	tr := s.tracer("H0-0", o)
	if !cold {
		for _, lid := range lids {
			tr.Trace(ctx, Destination{LID: lid})
		}
	}
	var mads, hops, smps int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if cold {
			b.StopTimer()
			tr = s.tracer("H0-0", o)
			b.StartTimer()
		}
		before := lidSMPs(tr)
		r := tr.Trace(ctx, Destination{LID: lids[i%len(lids)]})
		if r.Status != StatusOK {
			b.Fatal(r.Err)
		}
		mads += r.MADs
		hops += r.PathHops()
		smps += lidSMPs(tr) - before
	}
	b.ReportMetric(float64(mads)/float64(b.N), "MADs/trace")
	b.ReportMetric(float64(mads)/float64(hops), "MADs/hop")
	b.ReportMetric(float64(smps)/float64(hops), "SMA-SMPs/hop")
}
