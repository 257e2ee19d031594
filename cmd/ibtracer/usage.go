package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/internal/nodenamemap"
	"github.com/ibtracer/ibtracer_exporter/linkhealth"
	"github.com/ibtracer/ibtracer_exporter/plan"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// usage is what the flags say once checked: what to trace and how.
type usage struct {
	hopts  linkhealth.Options
	health bool
	via    trace.LinkRef
	dests  []trace.Destination
	mlid   uint16 // -m; 0: unicast
	names  nodenamemap.Map
	oui    ibmad.OUI
	plan   *plan.Plan // --plan's, nil without it or with --write (plan.go)
}

// checkUsage checks the flags together, before any device is opened: a
// bad combination is exitUsage with one line on stderr.
func (o *options) checkUsage(stderr io.Writer) (usage, int) {
	var u usage
	if err := o.aliases(); err != nil {
		fmt.Fprintf(stderr, "ibtracer: %v; see ibtracer --help\n", err)
		return u, exitUsage
	}
	var err error
	u.hopts, u.health, u.via, err = o.healthAndVia()
	if err != nil {
		fmt.Fprintf(stderr, "ibtracer: %v\n", err)
		return u, exitUsage
	}
	if u.plan, err = o.planUsage(); err != nil {
		fmt.Fprintf(stderr, "ibtracer: %v\n", err)
		return u, exitUsage
	}
	u.dests, err = o.destinations()
	if err != nil {
		fmt.Fprintf(stderr, "ibtracer: %v; see ibtracer --help\n", err)
		return u, exitUsage
	}
	if err := o.lmcAllUsage(u.health); err != nil {
		fmt.Fprintf(stderr, "ibtracer: %v\n", err)
		return u, exitUsage
	}
	if o.mlid != "" {
		if u.mlid, err = parseMLID(o.mlid); err == nil && u.health {
			err = fmt.Errorf("-m does not combine with --health")
		}
		if err == nil {
			err = o.multicastUsage()
		}
		if err != nil {
			fmt.Fprintf(stderr, "ibtracer: %v; see ibtracer --help\n", err)
			return u, exitUsage
		}
	}
	if o.nameMap != "" {
		if u.names, err = nodenamemap.Load(o.nameMap); err != nil {
			fmt.Fprintf(stderr, "ibtracer: --node-name-map: %v\n", err)
			return u, exitUsage
		}
	}
	if u.oui, err = trace.ParseOUI(o.oui); err != nil {
		fmt.Fprintf(stderr, "ibtracer: --oui %v\n", err)
		return u, exitUsage
	}
	return u, 0
}

// aliases applies ibtracert's -C and -P to --ib.ca and --ib.port.
func (o *options) aliases() error {
	if o.caAlias != "" {
		if o.ib.CA != "" && o.ib.CA != o.caAlias {
			return fmt.Errorf("-C %q and --ib.ca %q disagree", o.caAlias, o.ib.CA)
		}
		o.ib.CA = o.caAlias
	}
	if o.portAlias != "" {
		v, err := strconv.ParseUint(o.portAlias, 10, 8)
		if err != nil || v > 254 {
			return fmt.Errorf("-P %q: want a port number 0..254", o.portAlias)
		}
		if o.ib.Port != 0 && o.ib.Port != int(v) {
			return fmt.Errorf("-P %d and --ib.port %d disagree", v, o.ib.Port)
		}
		o.ib.Port = int(v)
	}
	return nil
}

// lmcAllUsage is why the flags do not combine with --lmc-all (health:
// --health or one of its flags was given), nil when they do; asked
// before any MAD is sent.
func (o *options) lmcAllUsage(health bool) error {
	switch {
	case o.lmcAll && health:
		return errors.New("--health (and --expect-*, --pm, --threshold-file) does not combine with --lmc-all; trace one LID with --health")
	case o.lmcAll && o.from != 0:
		return errors.New("--lmc-all traces from the local port: give no SRC_LID with it; see ibtracer --help")
	}
	return nil
}

// multicastUsage checks that -m comes with the forms it takes: ibtracert
// -m's [SRC_LID] DST_LID and the output flags.
func (o *options) multicastUsage() error {
	switch {
	case len(o.lids)+len(o.gids)+len(o.guids)+len(o.nodes) > 0 || o.all:
		return fmt.Errorf("-m traces [SRC_LID] DST_LID given as arguments: no -l, -g, -G, --node or --all with it")
	case o.lmcAll:
		return fmt.Errorf("-m does not combine with --lmc-all")
	case o.discovery == "sa":
		return fmt.Errorf("-m reads the MFTs with SMPs: --discovery=sa cannot trace multicast")
	}
	return nil
}

// healthAndVia reads the --health flags (health.go), then --via, whose
// usage depends on them (viaUsage).
func (o *options) healthAndVia() (linkhealth.Options, bool, trace.LinkRef, error) {
	hopts, health, err := o.health.options()
	if err != nil || o.via == "" {
		return hopts, health, trace.LinkRef{}, err
	}
	l, err := o.viaUsage(health)
	if err != nil {
		err = fmt.Errorf("%w; see ibtracer --help", err)
	}
	return hopts, health, l, err
}

// viaUsage reads --via: the link end it names (its node by GUID or by
// name, resolved once the paths are traced: resolveVia), and whether the
// rest of the command line goes with it. Without a destination --via
// traces --all: the blast radius of a link is over every destination.
func (o *options) viaUsage(health bool) (trace.LinkRef, error) {
	l, err := trace.ParseLinkRef(o.via)
	if err != nil {
		return l, fmt.Errorf("--via %w", err)
	}
	switch {
	case o.mlid != "":
		return l, fmt.Errorf("--via does not combine with -m (a multicast path is not a destination's route)")
	case o.lmcAll:
		return l, fmt.Errorf("--via does not combine with --lmc-all; give the LIDs with -l")
	case health:
		return l, fmt.Errorf("--via does not combine with --health; check the link's destinations with --health -l LID")
	}
	if len(o.positional)+len(o.lids)+len(o.gids)+len(o.guids)+len(o.nodes) == 0 {
		o.all = true
	}
	return l, nil
}
