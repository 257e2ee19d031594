package config

import (
	"strings"

	"github.com/ibtracer/ibtracer_exporter/trace"
)

// checkValidate defaults and validates the validate key: who validates
// each hop (docs/architecture.md, "The life of a trace", step 5), with
// ibtracer's --validate values. The key once took true or false; those
// keep their meaning: false asks nobody (off), true was the default and
// is the default now, auto.
func (c *Config) checkValidate(bad badFunc) error {
	switch strings.ToLower(string(c.Validate)) {
	case "true":
		c.Validate = trace.ValidateAuto
	case "false":
		c.Validate = trace.ValidateOff
	default:
		m, err := trace.ParseValidate(strings.ToLower(string(c.Validate)))
		if err != nil {
			return bad(c.line("validate"), "validate", "%q: want auto, agent, sma or off (true is auto, false is off)", string(c.Validate))
		}
		c.Validate = m
	}
	return nil
}
