package config

import (
	"errors"
	"fmt"
	"time"

	"github.com/ibtracer/ibtracer_exporter/trace"
)

// Line is where the destination starts in its file.
func (d Destination) Line() int { return d.line }

// Target returns the trace destination: the address validation read
// (trace.ParseDestination, once), with the destination's name.
func (d Destination) Target() trace.Destination {
	return trace.Destination{Name: d.Name, LID: d.LID, GID: d.gid, GUID: d.guid, Node: d.Node, Port: uint8(d.Port)}
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
	if err := d.checkMLID(i, bad); err != nil { // mlid.go
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

func (d *Destination) field(i int, f string) string {
	return fmt.Sprintf("destinations[%d] (%s).%s", i, d.Name, f)
}
