package config

import (
	"context"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// TestTraceOptionsMeanings: the one translation gives every knob the
// meaning the file documents: 0 retries is no retry, a 0 lifetime keeps
// nothing, and a key left out is the default.
func TestTraceOptionsMeanings(t *testing.T) {
	for _, tc := range []struct {
		yml  string
		want func(o trace.Options) bool
	}{
		{"", func(o trace.Options) bool {
			return *o.Retries == DefaultRetries && o.Timeout == DefaultTimeout &&
				*o.ResolveTTL == DefaultResolveTTL && o.ShareValidation == DefaultShareValidation &&
				*o.SARecordTTL == DefaultShareValidation && o.ShareFacts == DefaultShareValidation && o.SupportTTL == DefaultAgentSupportTTL &&
				o.OUI == ibmad.OUIOpenIB && o.Validate != trace.ValidateOff && o.Discovery == trace.DiscoveryAuto && !o.SL.Fixed()
		}},
		// sl: given, even 0, wins over a PathRecord's SL.
		{"sl: 0\n", func(o trace.Options) bool { return o.SL == trace.FixedSL(0) }},
		{"retries: 0\n", func(o trace.Options) bool { return *o.Retries == 0 }},
		{"retries: 3\n", func(o trace.Options) bool { return *o.Retries == 3 }},
		{"resolve_ttl: 0s\n", func(o trace.Options) bool { return *o.ResolveTTL == 0 }},
		{"resolve_ttl: 5s\n", func(o trace.Options) bool { return *o.ResolveTTL == 5*time.Second }},
		{"share_validation: 0s\n", func(o trace.Options) bool {
			return o.ShareValidation == 0 && *o.SARecordTTL == 0 && o.ShareFacts == 0
		}},
		{"share_validation: 1m\n", func(o trace.Options) bool {
			return o.ShareValidation == time.Minute && *o.SARecordTTL == time.Minute && o.ShareFacts == time.Minute
		}},
		{"agent_support_ttl: 5m\nvalidate: false\ndiscovery: sa\nsl: 3\ntimeout: 20ms\n", func(o trace.Options) bool {
			return o.SupportTTL == 5*time.Minute && o.Validate == trace.ValidateOff && o.Discovery == trace.DiscoverySA && o.SL == trace.FixedSL(3) &&
				o.Timeout == 20*time.Millisecond
		}},
	} {
		c, err := Parse("o.yml", []byte(tc.yml))
		if err != nil {
			t.Fatal(err)
		}
		if o := c.TraceOptions(); !tc.want(o) {
			t.Errorf("%q: %+v", tc.yml, o)
		}
	}
}

// TestRetriesReachTheWire: the retries of the file are the attempts the
// engine makes at a node that never answers: retries: 0 is one attempt,
// not the engine's default; a key left out is DefaultRetries.
func TestRetriesReachTheWire(t *testing.T) {
	topo, err := sim.FatTree2(2, 2, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		yml     string
		retries uint64
	}{
		{"retries: 0\n", 0},
		{"retries: 3\n", 3},
		{"", DefaultRetries},
	} {
		f, err := sim.New(topo, sim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		lid, err := f.LIDOf("H1-0", 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.SetSilent("H1-0", true); err != nil {
			t.Fatal(err)
		}
		tp, err := f.Attach("H0-0", 0)
		if err != nil {
			t.Fatal(err)
		}
		eng := ibmad.NewEngine(tp, ibmad.Options{}) // as the exporter's: the engine's own defaults
		c, err := Parse("o.yml", []byte(tc.yml+"timeout: 5ms\nvalidate: false\ndiscovery: smp\n"))
		if err != nil {
			t.Fatal(err)
		}
		r := trace.New(eng, c.TraceOptions()).Trace(context.Background(), trace.Destination{LID: lid})
		st := eng.Stats()
		eng.Close()
		var timeouts, retries uint64
		for _, cs := range st.Classes {
			timeouts, retries = timeouts+cs.Timeouts, retries+cs.Retries
		}
		if r.Status != trace.StatusUnreachable || timeouts != tc.retries+1 || retries != tc.retries {
			t.Errorf("%q: %s, %d timeouts, %d retries; want unreachable, %d and %d", tc.yml, r.Status, timeouts, retries, tc.retries+1, tc.retries)
		}
	}
}
