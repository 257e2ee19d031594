package config

import (
	"fmt"
	"path/filepath"
	"sort"

	"github.com/ibtracer/ibtracer_exporter/linkhealth"
)

// HealthConfig is the health: section: the health of every link of every
// traced path (linkhealth.Checker; docs/metrics.md, "Link health").
type HealthConfig struct {
	Enabled bool `yaml:"enabled"`
	// ExpectWidth ("4x") and ExpectSpeed ("EDR") make narrower or slower
	// links below_expected.
	ExpectWidth string `yaml:"expect_width"`
	ExpectSpeed string `yaml:"expect_speed"`
	// Counters reads the PerfMgt error counters at both ends of every link
	// (default true when enabled).
	Counters *bool `yaml:"counters"`
	// Limits per counter name: a link whose counter rose by more than its
	// limit in one interval is unhealthy.
	Limits map[string]uint64 `yaml:"limits"`
	// ThresholdFile holds more limits in ibqueryerrors' --threshold-file
	// format; a relative path is relative to the configuration file.
	// Limits given in the file and in limits: take the limits: value.
	ThresholdFile string `yaml:"threshold_file"`
	// XmitWaitLimit makes a link congested when an end's PortXmitWait
	// rose by this share of the interval's ticks (0.05: 5 %); unset, no
	// link is judged congested (congestion.go).
	XmitWaitLimit Share `yaml:"xmit_wait_limit"`
	// XmitWaitTickSymbols is a PortXmitWait tick in symbol times
	// (PortSamplesControl Tick + 1); 0: linkhealth's default, 8.
	XmitWaitTickSymbols int `yaml:"xmit_wait_tick_symbols"`

	// Options is the section read (Enabled false: health off).
	Options linkhealth.Options `yaml:"-"`
}

// check validates the section and fills Options; line is the section's.
func (h *HealthConfig) check(file string, line int) error {
	bad := func(field, format string, a ...any) error {
		return &Error{File: file, Line: line, Field: "health." + field, Msg: fmt.Sprintf(format, a...)}
	}
	o := linkhealth.Options{Limits: map[string]uint64{}}
	var err error
	if h.ExpectWidth != "" {
		if o.ExpectWidth, err = linkhealth.ParseWidth(h.ExpectWidth); err != nil {
			return bad("expect_width", "%v", err)
		}
	}
	if h.ExpectSpeed != "" {
		if o.ExpectSpeed, err = linkhealth.ParseSpeed(h.ExpectSpeed); err != nil {
			return bad("expect_speed", "%v", err)
		}
	}
	if h.Counters == nil {
		t := true
		h.Counters = &t
	}
	o.Counters = *h.Counters
	if h.ThresholdFile != "" {
		p := h.ThresholdFile
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(file), p)
		}
		if err := linkhealth.LoadLimits(p, o.Limits); err != nil {
			return bad("threshold_file", "%v", err)
		}
	}
	names := make([]string, 0, len(h.Limits))
	for n := range h.Limits {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !linkhealth.IsCounterName(n) {
			return bad("limits", "%q is not a counter: use one of %v", n, linkhealth.CounterNames)
		}
		o.Limits[n] = h.Limits[n]
	}
	o.XmitWaitLimit, o.XmitWaitTickSymbols = float64(h.XmitWaitLimit), h.XmitWaitTickSymbols
	if (o.ExpectWidth != 0 || o.ExpectSpeed != 0 || len(o.Limits) > 0 || h.ThresholdFile != "" || o.XmitWaitLimit > 0) && !h.Enabled {
		return bad("enabled", "health settings are given but health is off: set enabled: true")
	}
	if !*h.Counters && len(o.Limits) > 0 {
		return bad("limits", "counter limits need counters: true")
	}
	if !*h.Counters && o.XmitWaitLimit > 0 {
		return bad("xmit_wait_limit", "the congestion limit needs counters: true")
	}
	h.Options = o
	return nil
}
