package config

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/internal/nodenamemap"
	"github.com/ibtracer/ibtracer_exporter/plan"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// badFunc makes a configuration error at a line of the file, for a field.
type badFunc func(line int, field, format string, a ...any) error

// errorsIn is the badFunc of file.
func errorsIn(file string) badFunc {
	return func(line int, field, format string, a ...any) error {
		return &Error{File: file, Line: line, Field: field, Msg: fmt.Sprintf(format, a...)}
	}
}

// defaults fills in what the file leaves out and validates what it says,
// one part at a time, each by its own method, and reads the node-name map,
// which the discover selectors need. The first error wins.
func (c *Config) defaults(file string) error {
	bad := errorsIn(file)
	for _, step := range []func() error{
		func() error { return c.checkTiming(bad) },
		func() error { return c.checkWindows(bad) },
		func() error { return c.Agent.check(bad, c.line("agent")) },
		func() error { return c.checkLifetimes(bad) },
		func() error { return c.loadNodeNames(file, bad) },
		func() error { return c.loadPlan(file, bad) },
		func() error { return c.Health.check(file, c.line("health")) },
		func() error { return c.Evidence.check(file, c.line("evidence")) },
		func() error { return c.checkDiscovery(bad) },
		func() error { return c.checkFleet(bad) },
		func() error { return c.checkDestinations(bad) },
	} {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// checkTiming: interval, timeout and retries.
func (c *Config) checkTiming(bad badFunc) error {
	if c.Interval == 0 {
		c.Interval = Duration(DefaultInterval)
	}
	if time.Duration(c.Interval) < MinInterval {
		return bad(c.line("interval"), "interval", "%v is shorter than %v", time.Duration(c.Interval), MinInterval)
	}
	if c.Timeout == 0 {
		c.Timeout = Duration(DefaultTimeout)
	}
	if c.Timeout < 0 || time.Duration(c.Timeout) > time.Minute {
		return bad(c.line("timeout"), "timeout", "%v: want a per-MAD timeout between 1ms and 1m", time.Duration(c.Timeout))
	}
	if c.Retries == nil {
		r := DefaultRetries
		c.Retries = &r
	}
	if *c.Retries < 0 || *c.Retries > 10 {
		return bad(c.line("retries"), "retries", "%d: want 0..10", *c.Retries)
	}
	return nil
}

// checkWindows: concurrency, the MAD windows, the OUI and the SL.
func (c *Config) checkWindows(bad badFunc) error {
	if c.Concurrency == 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.Concurrency < 1 || c.Concurrency > 4096 {
		return bad(c.line("concurrency"), "concurrency", "%d: want 1..4096", c.Concurrency)
	}
	if c.MADWindow == 0 {
		c.MADWindow = DefaultMADWindow
	}
	if c.MADPerTarget == 0 {
		c.MADPerTarget = DefaultPerTarget
	}
	if c.MADWindow < 1 || c.MADPerTarget < 1 || c.MADPerTarget > c.MADWindow {
		return bad(c.line("mad_window"), "mad_window", "%d (per target %d): want 1 <= mad_window_per_target <= mad_window", c.MADWindow, c.MADPerTarget)
	}
	if c.OUI == 0 {
		c.OUI = OUI(ibmad.OUIOpenIB)
	}
	if c.SL > 15 {
		return bad(c.line("sl"), "sl", "%d: want 0..15", c.SL)
	}
	return nil
}

// check defaults and validates the agent: section, which starts on line.
func (a *AgentConfig) check(bad badFunc, line int) error {
	a.Enabled = orTrue(a.Enabled)
	a.Ping = orTrue(a.Ping)
	if a.RatePerSource == 0 {
		a.RatePerSource = DefaultAgentRate
	}
	if a.RatePerSource < 0 || a.Burst < 0 {
		return bad(line, "agent.rate_per_source", "must not be negative")
	}
	return nil
}

// checkLifetimes: validate (checkValidate), share_validation,
// agent_support_ttl and resolve_ttl.
func (c *Config) checkLifetimes(bad badFunc) error {
	if err := c.checkValidate(bad); err != nil {
		return err
	}
	c.ShareValidation = orDuration(c.ShareValidation, DefaultShareValidation)
	if *c.ShareValidation < 0 {
		return bad(c.line("share_validation"), "share_validation", "must not be negative")
	}
	c.AgentSupportTTL = orDuration(c.AgentSupportTTL, DefaultAgentSupportTTL)
	if *c.AgentSupportTTL <= 0 {
		return bad(c.line("agent_support_ttl"), "agent_support_ttl", "%s: want a positive duration such as 10m",
			time.Duration(*c.AgentSupportTTL))
	}
	c.ResolveTTL = orDuration(c.ResolveTTL, DefaultResolveTTL)
	if *c.ResolveTTL < 0 {
		return bad(c.line("resolve_ttl"), "resolve_ttl", "must not be negative")
	}
	return nil
}

// checkValidate defaults and validates the validate key: who validates
// each hop (docs/architecture.md, "The life of a trace", step 5), with
// ibtracer's --validate values, read by trace.ParseValidate. The key once
// took true or false; those keep their meaning: false asks nobody (off),
// true was the default and is the default now, auto.
func (c *Config) checkValidate(bad badFunc) error {
	switch s := strings.ToLower(string(c.Validate)); s {
	case "true":
		c.Validate = trace.ValidateAuto
	case "false":
		c.Validate = trace.ValidateOff
	default:
		m, err := trace.ParseValidate(s) // "": auto
		if err != nil {                  // the file's message, which names the old booleans too
			return bad(c.line("validate"), "validate", "%q: want auto, agent, sma or off (true is auto, false is off)", string(c.Validate))
		}
		c.Validate = m
	}
	return nil
}

// checkDiscovery defaults and validates the discovery key: how a trace
// learns the path (smp, sa or auto, the file's default), read by
// trace.ParseDiscovery; the file's error names the line and the key.
func (c *Config) checkDiscovery(bad badFunc) error {
	d, err := trace.ParseDiscovery(strings.ToLower(string(c.Discovery))) // "": auto
	if err != nil {
		return bad(c.line("discovery"), "discovery", "%q: want smp, sa or auto", string(c.Discovery))
	}
	c.Discovery = d
	return nil
}

// loadNodeNames reads node_name_map, when set, into NodeNames; a relative
// path is relative to the configuration file.
func (c *Config) loadNodeNames(file string, bad badFunc) error {
	if c.NodeNameMap == "" {
		return nil
	}
	p := c.NodeNameMap
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(file), p)
	}
	m, err := nodenamemap.Load(p)
	if err != nil {
		return bad(c.line("node_name_map"), "node_name_map", "%v", err)
	}
	c.NodeNames = m
	return nil
}

// loadPlan reads plan, when set, into Plan; a relative path is relative
// to the configuration file. A malformed plan is the configuration's
// error at the plan key, with the plan's file, line and fault.
func (c *Config) loadPlan(file string, bad badFunc) error {
	if c.PlanFile == "" {
		return nil
	}
	p := c.PlanFile
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(file), p)
	}
	pl, err := plan.ParseFile(p)
	if err != nil {
		return bad(c.line("plan"), "plan", "%v", err)
	}
	c.Plan = pl
	return nil
}

// checkDestinations defaults and validates every destination; names
// must be unique.
func (c *Config) checkDestinations(bad badFunc) error {
	names := map[string]int{}
	for i := range c.Destinations {
		if err := c.Destinations[i].check(i, names, c.Interval, bad); err != nil {
			return err
		}
	}
	return nil
}

// checkFleet validates mad_rate, mad_rate_per_target and discover.
func (c *Config) checkFleet(bad badFunc) error {
	for _, r := range []struct {
		key string
		v   float64
	}{{"mad_rate", c.MADRate}, {"mad_rate_per_target", c.MADRatePerTarget}} {
		if r.v < 0 || math.IsNaN(r.v) || math.IsInf(r.v, 0) || r.v > 1e6 {
			return bad(c.line(r.key), r.key, "%v: want MADs per second between 0 (no limit) and 1000000", r.v)
		}
	}
	if c.MADRate > 0 && c.MADRatePerTarget > c.MADRate {
		return bad(c.line("mad_rate_per_target"), "mad_rate_per_target", "%v is above mad_rate (%v)", c.MADRatePerTarget, c.MADRate)
	}
	for i := range c.Discover {
		if err := c.Discover[i].check(i, c.NodeNames, c.Interval, bad); err != nil {
			return err
		}
	}
	return nil
}

// checkLabels validates the label names of a destination or a selector
// (line and field: its labels key).
func checkLabels(labels map[string]string, line int, field string, bad badFunc) error {
	for k := range labels {
		if !labelNameRe.MatchString(k) || strings.HasPrefix(k, "__") {
			return bad(line, field, "%q is not a valid label name", k)
		}
		if ReservedLabels[k] {
			return bad(line, field, "%q is set by the exporter; choose another name", k)
		}
	}
	return nil
}

// orTrue is b, or true when the file leaves it out.
func orTrue(b *bool) *bool {
	if b == nil {
		t := true
		return &t
	}
	return b
}

// orDuration is d, or def when the file leaves it out.
func orDuration(d *Duration, def time.Duration) *Duration {
	if d == nil {
		v := Duration(def)
		return &v
	}
	return d
}
