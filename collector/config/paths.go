package config

import (
	"strings"

	"github.com/ibtracer/ibtracer_exporter/trace"
)

// Values of a destination's paths key.
const (
	PathsOne = "one" // the LID given (or resolved): one path
	PathsAll = "all" // every LID of the destination port's LMC range
)

// Values of the discovery key: how a trace learns the path.
const (
	DiscoverySMP  = string(trace.DiscoverySMP)  // directed-route SMPs
	DiscoverySA   = string(trace.DiscoverySA)   // SA records only (where SMPs are not allowed)
	DiscoveryAuto = string(trace.DiscoveryAuto) // SMPs, falling back to the SA when they are refused
)

// checkPaths defaults and validates the paths key.
func (d *Destination) checkPaths(i int, bad badFunc) error {
	switch strings.ToLower(d.Paths) {
	case "", PathsOne:
		d.Paths = PathsOne
	case PathsAll:
		d.Paths = PathsAll
	default:
		return bad(d.keyLine("paths"), d.field(i, "paths"), "%q: want one (the LID given) or all (every LID of the port's LMC range)", d.Paths)
	}
	return nil
}

// AllPaths says whether the destination traces every LID of its port.
func (d Destination) AllPaths() bool { return d.Paths == PathsAll }

// checkDiscovery defaults and validates the discovery key.
func (c *Config) checkDiscovery(bad badFunc) error {
	d, err := trace.ParseDiscovery(strings.ToLower(c.Discovery))
	if err != nil {
		return bad(c.line("discovery"), "discovery", "%q: want smp, sa or auto", c.Discovery)
	}
	c.Discovery = string(d)
	return nil
}
