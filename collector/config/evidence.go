package config

import (
	"fmt"
	"time"
)

// EvidenceConfig is the evidence: section: per-link evidence from the
// traced paths (localize; docs/metrics.md, "Link evidence").
type EvidenceConfig struct {
	Enabled bool `yaml:"enabled"`
	// LatencyThreshold makes a path whose round trip to the destination's
	// agent is above it a bad path (0, the default: latency is not
	// judged).
	LatencyThreshold Duration `yaml:"latency_threshold"`
	// MaxLinks bounds the links with series, the most suspected first
	// (default DefaultEvidenceMaxLinks; its range is in numbers.go).
	MaxLinks int `yaml:"max_links"`
}

// DefaultEvidenceMaxLinks is evidence.max_links' default: 3,000 series
// at most, about 370 kB of /metrics (docs/metrics.md, "Link evidence").
const DefaultEvidenceMaxLinks = 1000

// check validates the section; line is the section's.
func (v *EvidenceConfig) check(file string, line int) error {
	bad := func(field, format string, a ...any) error {
		return &Error{File: file, Line: line, Field: "evidence." + field, Msg: fmt.Sprintf(format, a...)}
	}
	if v.LatencyThreshold < 0 {
		return bad("latency_threshold", "%v is negative: give a round trip such as 1ms, or leave it out", time.Duration(v.LatencyThreshold))
	}
	if (v.LatencyThreshold != 0 || v.MaxLinks != 0) && !v.Enabled {
		return bad("enabled", "evidence settings are given but evidence is off: set enabled: true")
	}
	if v.MaxLinks == 0 {
		v.MaxLinks = DefaultEvidenceMaxLinks
	}
	return nil
}
