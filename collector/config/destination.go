package config

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// Destination is one traced destination.
type Destination struct {
	Name     string            `yaml:"name"`
	LID      uint16            `yaml:"lid"`
	GID      string            `yaml:"gid"`
	GUID     string            `yaml:"guid"`
	Node     string            `yaml:"node"`
	Port     int               `yaml:"port"` // with node: which port; default its first active one
	Interval Duration          `yaml:"interval"`
	Labels   map[string]string `yaml:"labels"`
	// Paths is "one" (the default: the LID given) or "all" (every LID of
	// the port's LMC range; checkPaths).
	Paths string `yaml:"paths"`
	// Hops: per-hop and path-detail series (default true; false for
	// discovered destinations unless their selector says so).
	Hops *bool `yaml:"hops"`
	// MLID makes it a multicast destination: the path over the MFTs of
	// this multicast LID from this node to the member lid: (multicast.go).
	MLID  uint16 `yaml:"mlid"`
	line  int
	lines map[string]int
	// gid and guid are GID and GUID parsed, once, by validation.
	gid  ibmad.GID
	guid ibmad.GUID
}

// Values of a destination's paths key.
const (
	PathsOne = "one" // the LID given (or resolved): one path
	PathsAll = "all" // every LID of the destination port's LMC range
)

// Line is where the destination starts in its file.
func (d Destination) Line() int { return d.line }

// AllPaths says whether the destination traces every LID of its port.
func (d Destination) AllPaths() bool { return d.Paths == PathsAll }

// HopSeries reports whether the destination exports its per-hop and
// path-detail series (hops:, default true).
func (d Destination) HopSeries() bool { return d.Hops == nil || *d.Hops }

// Target returns the trace destination: the address validation read
// (trace.ParseDestination, once), with the destination's name.
func (d Destination) Target() trace.Destination {
	return trace.Destination{Name: d.Name, LID: d.LID, GID: d.gid, GUID: d.guid, Node: d.Node, Port: uint8(d.Port)}
}

// check defaults and validates destination i; names holds the lines of
// the names before it, interval is the file's.
func (d *Destination) check(i int, names map[string]int, interval Duration, bad badFunc) error {
	if d.Name == "" {
		return bad(d.line, fmt.Sprintf("destinations[%d].name", i), "missing: every destination needs a name")
	}
	if prev, dup := names[d.Name]; dup {
		return bad(d.keyLine("name"), fmt.Sprintf("destinations[%d].name", i), "%q is already used at line %d", d.Name, prev)
	}
	names[d.Name] = d.line
	if err := d.checkMLID(i, bad); err != nil { // multicast.go
		return err
	}
	if err := d.parseAddress(i, bad); err != nil {
		return err
	}
	if d.Interval != 0 && time.Duration(d.Interval) < MinInterval {
		return bad(d.keyLine("interval"), d.field(i, "interval"), "%v is shorter than %v", time.Duration(d.Interval), MinInterval)
	}
	if d.Interval == 0 {
		d.Interval = interval
	}
	if err := d.checkPaths(i, bad); err != nil {
		return err
	}
	return checkLabels(d.Labels, d.keyLine("labels"), d.field(i, "labels"), bad)
}

// parseAddress reads the address through trace's one parse and check
// (trace.ParseDestination) and keeps the GID and GUID it parsed; its
// error names the key at fault.
func (d *Destination) parseAddress(i int, bad badFunc) error {
	t, err := trace.ParseDestination(d.LID, d.GID, d.GUID, d.Node, d.Port)
	var de *trace.DestinationError
	switch {
	case err == nil:
		d.gid, d.guid = t.GID, t.GUID
		return nil
	case !errors.As(err, &de):
		return bad(d.line, fmt.Sprintf("destinations[%d] (%s)", i, d.Name), "%v", err)
	case de.Field == "":
		return bad(d.line, fmt.Sprintf("destinations[%d] (%s)", i, d.Name), "%s", de.Msg)
	}
	return bad(d.keyLine(de.Field), d.field(i, de.Field), "%s", de.Msg)
}

// field names key f of destination i in an error.
func (d *Destination) field(i int, f string) string {
	return fmt.Sprintf("destinations[%d] (%s).%s", i, d.Name, f)
}

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

// keyLine returns the line of a destination's key, or the destination's.
func (d *Destination) keyLine(key string) int {
	if l, ok := d.lines[key]; ok {
		return l
	}
	return d.line
}
