package config

import (
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// TraceOptions is the one translation of a (validated) configuration into
// trace.Options (docs/architecture.md, "Options: one meaning per knob").
// The file's words and trace's are the same: retries: 0 sends each MAD
// once, and a lifetime of 0 (resolve_ttl, share_validation) keeps
// nothing; a key left out already holds its default (Parse).
// SA-mode records, and the facts the SMP walks read (trace.Options.ShareFacts:
// each asked once by whichever destination needs it first), are shared
// across destinations exactly as long as SMP-mode LFT blocks and
// verdicts: share_validation. The caller sets
// what is not configuration (Now, Log).
func (c *Config) TraceOptions() trace.Options {
	sl := trace.DefaultSL(c.SL)
	if c.has("sl") {
		sl = trace.FixedSL(c.SL)
	}
	return trace.Options{
		Timeout:         time.Duration(c.Timeout),
		Retries:         new(*c.Retries),
		OUI:             ibmad.OUI(c.OUI),
		SL:              sl,
		Validate:        c.Validate,
		SupportTTL:      time.Duration(*c.AgentSupportTTL),
		ResolveTTL:      new(time.Duration(*c.ResolveTTL)),
		ShareValidation: time.Duration(*c.ShareValidation),
		SARecordTTL:     new(time.Duration(*c.ShareValidation)),
		ShareFacts:      time.Duration(*c.ShareValidation),
		Discovery:       trace.Discovery(c.Discovery),
	}
}
