package config

import (
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// TraceOptions is the one translation of a (validated) configuration into
// trace.Options (docs/architecture.md, "Options: one meaning per knob").
// The file's words and trace's differ only where the file says 0: there
// retries: 0 is NoRetry, and resolve_ttl: 0 or share_validation: 0 is
// trace.Off; a key left out already holds its default (Parse).
// SA-mode records, and the facts the SMP walks read (trace.Options.ShareFacts:
// each asked once by whichever destination needs it first), are shared
// across destinations exactly as long as SMP-mode LFT blocks and
// verdicts: share_validation. The caller sets
// what is not configuration (Now, Log).
func (c *Config) TraceOptions() trace.Options {
	return trace.Options{
		Timeout:         time.Duration(c.Timeout),
		Retries:         *c.Retries,
		NoRetry:         *c.Retries == 0,
		OUI:             ibmad.OUI(c.OUI),
		SL:              c.SL,
		SLFixed:         c.has("sl"),
		Validate:        c.Validate,
		NoValidate:      c.Validate == trace.ValidateOff,
		SupportTTL:      time.Duration(*c.AgentSupportTTL),
		ResolveTTL:      orOff(*c.ResolveTTL),
		ShareValidation: orOff(*c.ShareValidation),
		SARecordTTL:     orOff(*c.ShareValidation),
		ShareFacts:      orOff(*c.ShareValidation),
		Discovery:       trace.Discovery(c.Discovery),
	}
}

// orOff is a lifetime of the file (0: keep nothing) as trace.Options
// takes it (0: the default; trace.Off: keep nothing).
func orOff(d Duration) time.Duration {
	if d == 0 {
		return trace.Off
	}
	return time.Duration(d)
}
