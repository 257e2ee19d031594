package config

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"

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
	// HostLinks and SwitchLinks state them for one kind of link: host
	// links (a CA or router at one end: a split HDR100 cable at 2X) and
	// switch-to-switch links; a key left out takes the general one.
	HostLinks   LinkExpect `yaml:"host_links"`
	SwitchLinks LinkExpect `yaml:"switch_links"`
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
	// link is judged congested (Share).
	XmitWaitLimit Share `yaml:"xmit_wait_limit"`
	// XmitWaitTickSymbols is a PortXmitWait tick in symbol times
	// (PortSamplesControl Tick + 1); 0: linkhealth's default, 8.
	XmitWaitTickSymbols int `yaml:"xmit_wait_tick_symbols"`
	// BERTarget and BERCritical are the bit error rates a link may run
	// at: above BERTarget over the long window (125 minutes) the link
	// warns, above BERCritical over the short one (12 minutes) it is
	// critical (ber.go; docs/metrics.md, "Bit error rate"). 0: the
	// defaults, DefaultBERTarget and DefaultBERCritical.
	BERTarget   float64 `yaml:"ber_target"`
	BERCritical float64 `yaml:"ber_critical"`

	// Options is the section read (Enabled false: health off).
	Options linkhealth.Options `yaml:"-"`
	// BER is the targets read, per kind of link (KindHost, KindSwitch).
	BER map[string]BERTargets `yaml:"-"`
}

// Share is a share of a whole, written 0.05 for 5 %: health's
// xmit_wait_limit, the share of an interval's ticks a link end may wait
// to transmit before the link is congested (docs/metrics.md,
// "Congestion").
type Share float64

// UnmarshalYAML reads a share: a number above 0 and at most 1.
func (s *Share) UnmarshalYAML(n *yaml.Node) error {
	v, err := strconv.ParseFloat(n.Value, 64)
	if n.Kind != yaml.ScalarNode || err != nil || math.IsNaN(v) || v <= 0 || v > 1 {
		return fmt.Errorf("line %d: health.xmit_wait_limit: %q is not a share above 0 and at most 1 (0.05 is 5%% of the interval)",
			n.Line, n.Value)
	}
	*s = Share(v)
	return nil
}

// LinkExpect is the expected width and speed of one kind of link, and
// its BER targets (0: the general ones).
type LinkExpect struct {
	ExpectWidth string  `yaml:"expect_width"`
	ExpectSpeed string  `yaml:"expect_speed"`
	BERTarget   float64 `yaml:"ber_target"`
	BERCritical float64 `yaml:"ber_critical"`
}

// parse reads e into x; field names the section for an error.
func (e LinkExpect) parse(x *linkhealth.Expect, bad func(field, format string, a ...any) error, section string) error {
	var err error
	if e.ExpectWidth != "" {
		if x.Width, err = linkhealth.ParseWidth(e.ExpectWidth); err != nil {
			return bad(section+"expect_width", "%v", err)
		}
	}
	if e.ExpectSpeed != "" {
		if x.Speed, err = linkhealth.ParseSpeed(e.ExpectSpeed); err != nil {
			return bad(section+"expect_speed", "%v", err)
		}
	}
	return nil
}

// check validates the section and fills Options; line is the section's.
func (h *HealthConfig) check(file string, line int) error {
	bad := func(field, format string, a ...any) error {
		return &Error{File: file, Line: line, Field: "health." + field, Msg: fmt.Sprintf(format, a...)}
	}
	o := linkhealth.Options{Limits: map[string]uint64{}}
	var all linkhealth.Expect
	if err := (LinkExpect{ExpectWidth: h.ExpectWidth, ExpectSpeed: h.ExpectSpeed}).parse(&all, bad, ""); err != nil {
		return err
	}
	o.ExpectWidth, o.ExpectSpeed = all.Width, all.Speed
	if err := h.HostLinks.parse(&o.HostLinks, bad, "host_links."); err != nil {
		return err
	}
	if err := h.SwitchLinks.parse(&o.SwitchLinks, bad, "switch_links."); err != nil {
		return err
	}
	expects := o.ExpectWidth != 0 || o.ExpectSpeed != 0 || o.HostLinks != (linkhealth.Expect{}) || o.SwitchLinks != (linkhealth.Expect{})
	if err := h.checkBER(&o, bad); err != nil { // ber.go
		return err
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
	if (expects || h.berGiven() || len(o.Limits) > 0 || h.ThresholdFile != "" || o.XmitWaitLimit > 0) && !h.Enabled {
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

// healthBaselineIntervals: a port's previous counter reading serves as
// the baseline of the next for at most this many of the longest
// interval (linkhealth.Options.MaxWindow): a port on a traced path is
// read every interval, and one missed trace or a late one still leaves
// a baseline.
const healthBaselineIntervals = 3

// HealthOptions is the one translation of the health: section into
// linkhealth.Options: readings are shared for one interval (a port's
// PortInfo and counters read at most once an interval, whatever the
// number of destinations crossing it), and a port's previous reading
// older than healthBaselineIntervals of the longest interval is no
// baseline, so that the increments are the last interval's
// (docs/metrics.md, "Link health").
func (c *Config) HealthOptions() linkhealth.Options {
	o := c.Health.Options
	o.Share = time.Duration(c.Interval)
	longest := time.Duration(c.Interval)
	for _, d := range c.Destinations {
		longest = max(longest, time.Duration(d.Interval))
	}
	for _, s := range c.Discover {
		longest = max(longest, time.Duration(s.Interval))
	}
	o.MaxWindow = healthBaselineIntervals * longest
	return o
}
