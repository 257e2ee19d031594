package main

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/ibtracer/ibtracer_exporter/internal/strictint"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// destinations reads the destinations of the command line: the
// positional LIDs (and SRC_LID), then -l, -g, -G and --node (with --port).
func (o *options) destinations() ([]trace.Destination, error) {
	ds, err := o.positionalLIDs()
	if err != nil {
		return nil, err
	}
	if o.from != 0 && o.discovery == "sa" {
		return nil, fmt.Errorf("--discovery=sa traces from the local port: give no SRC_LID with it")
	}
	if o.from != 0 && o.all {
		return nil, fmt.Errorf("--all traces from the local port: give no SRC_LID with it")
	}
	for _, read := range []func() ([]trace.Destination, error){o.flagLIDs, o.flagAddresses, o.flagNodes} {
		more, err := read()
		if err != nil {
			return nil, err
		}
		ds = append(ds, more...)
	}
	if len(ds) == 0 && !o.all {
		return nil, fmt.Errorf("no destination: give -l LID, -g GID, -G GUID, --node NAME or --all")
	}
	return ds, nil
}

// positionalLIDs reads ibtracert's forms, DST_LID or SRC_LID DST_LID
// (which sets o.from).
func (o *options) positionalLIDs() ([]trace.Destination, error) {
	if len(o.positional) > 2 {
		return nil, fmt.Errorf("%d LIDs given: want DST_LID or SRC_LID DST_LID", len(o.positional))
	}
	var ds []trace.Destination
	for i, s := range o.positional {
		v, ok := parseLID(s)
		if !ok {
			return nil, fmt.Errorf("%q: want a unicast LID 1..49151 (ibtracer [SRC_LID] DST_LID)", s)
		}
		if i == 0 && len(o.positional) == 2 {
			o.from = v
			continue
		}
		ds = append(ds, trace.Destination{LID: v})
	}
	return ds, nil
}

// flagLIDs reads -l.
func (o *options) flagLIDs() ([]trace.Destination, error) {
	var ds []trace.Destination
	for _, s := range o.lids {
		v, ok := parseLID(s)
		if !ok {
			return nil, fmt.Errorf("-l %q: want a unicast LID 1..49151", s)
		}
		ds = append(ds, trace.Destination{LID: v})
	}
	return ds, nil
}

// flagAddresses reads -g and -G through trace's one parse of a written
// destination (trace.ParseDestination), as the configuration file does.
func (o *options) flagAddresses() ([]trace.Destination, error) {
	var ds []trace.Destination
	for _, s := range o.gids {
		d, err := trace.ParseDestination(0, s, "", "", 0)
		if err != nil {
			return nil, fmt.Errorf("-g %s", addressMsg(err))
		}
		ds = append(ds, d)
	}
	for _, s := range o.guids {
		d, err := trace.ParseDestination(0, "", s, "", 0)
		if err != nil {
			return nil, fmt.Errorf("-G %s", addressMsg(err))
		}
		ds = append(ds, d)
	}
	return ds, nil
}

// flagNodes reads --node and --port: one --port for every --node, or one
// per --node in order.
func (o *options) flagNodes() ([]trace.Destination, error) {
	if len(o.nodePorts) > 0 && (len(o.nodes) == 0 || len(o.nodePorts) != 1 && len(o.nodePorts) != len(o.nodes)) {
		return nil, fmt.Errorf("--port: give it with --node, once for all of them or once per --node (%d --node, %d --port)", len(o.nodes), len(o.nodePorts))
	}
	ports := make([]int, len(o.nodes))
	for i := range ports {
		if len(o.nodePorts) == 0 {
			continue
		}
		s := o.nodePorts[min(i, len(o.nodePorts)-1)]
		v, err := strconv.ParseUint(s, 10, 8)
		if err != nil || v < 1 || v > 254 {
			return nil, fmt.Errorf("--port %q: want a port number 1..254", s)
		}
		ports[i] = int(v)
	}
	var ds []trace.Destination
	for i, s := range o.nodes {
		if s == "" {
			return nil, fmt.Errorf("--node %q: want a node description of 1..64 bytes", s)
		}
		d, err := trace.ParseDestination(0, "", "", s, ports[i])
		if err != nil {
			return nil, fmt.Errorf("--node %q: %s", s, addressMsg(err))
		}
		ds = append(ds, d)
	}
	return ds, nil
}

// addressMsg is the message of trace.ParseDestination's error, without
// the key it names (the flag names it).
func addressMsg(err error) string {
	var de *trace.DestinationError
	if errors.As(err, &de) {
		return de.Msg
	}
	return err.Error()
}

// parseLID reads a unicast LID, in decimal or 0x hex (internal/strictint).
func parseLID(s string) (uint16, bool) {
	v, err := strictint.Parse(s)
	if err != nil || !strictint.InRange(v, 1, 0xBFFF) {
		return 0, false
	}
	return uint16(v.Int64()), true
}
