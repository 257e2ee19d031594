package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/internal/ibopen"
	"github.com/ibtracer/ibtracer_exporter/internal/nodenamemap"
	"github.com/ibtracer/ibtracer_exporter/internal/strictint"
	"github.com/ibtracer/ibtracer_exporter/linkhealth"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

type options struct {
	ib          ibopen.Config
	retries     int
	timeoutMS   int
	lids        []string
	gids        []string
	guids       []string
	nodes       []string
	nodePorts   []string
	all         bool
	verbose     bool
	oui         string
	sl          int
	format      string
	concurrency int
	noValidate  bool
	positional  []string
	caAlias     string
	portAlias   string
	nameMap     string
	from        uint16 // SRC_LID of the SRC DST form; 0: the local port
	lmcAll      bool   // every LID of each destination port (lmc.go)
	discovery   string // smp, sa or auto (trace.Discovery)
	health      healthFlags
}

func run(args []string, stdout, stderr io.Writer) int {
	var o options
	app := kingpin.New("ibtracer", "Trace InfiniBand routes hop by hop and validate every hop with the ibtracer vendor agent.")
	app.UsageWriter(stdout)
	app.ErrorWriter(stderr)
	app.HelpFlag.Short('h')
	ibopen.AddFlags(app, &o.ib, true)
	strictint.IntVar(app.Flag("retries", "Retries per MAD (per hop), 0..10.").Short('r').Default("2"), &o.retries, 0, 10)
	strictint.IntVar(app.Flag("timeout", "Timeout per MAD attempt, in milliseconds (1..60000).").Short('t').Default("1000"), &o.timeoutMS, 1, 60000)
	app.Flag("lid", "Destination LID (repeatable).").Short('l').StringsVar(&o.lids)
	app.Flag("gid", "Destination GID (repeatable), resolved through the SA.").Short('g').StringsVar(&o.gids)
	app.Flag("guid", "Destination port GUID (repeatable), resolved through the SA.").Short('G').StringsVar(&o.guids)
	app.Flag("node", "Destination node description (repeatable), resolved through the SA.").Short('N').StringsVar(&o.nodes)
	app.Flag("port", "Port of the --node to trace (1..254; default: its first active port). Once for every --node, or once per --node in order. Not the local port: that is -p/--ib.port.").StringsVar(&o.nodePorts)
	app.Flag("all", "Trace every CA port the SA knows but the local one; progress on a terminal, totals at the end.").BoolVar(&o.all)
	app.Flag("verbose", "Print the whole path, one line per hop, with the agent's verdict.").Short('v').BoolVar(&o.verbose)
	app.Flag("oui", "OUI of the ibtracer vendor class.").Default("0x001405").StringVar(&o.oui)
	strictint.IntVar(app.Flag("sl", "Service level of LID-routed MADs (0..15).").Default("0"), &o.sl, 0, 15)
	app.Flag("format", "Output format: text or json.").Default("text").EnumVar(&o.format, "text", "json")
	strictint.IntVar(app.Flag("concurrency", "Destinations traced at once (1..4096).").Default("32"), &o.concurrency, 1, 4096)
	app.Flag("no-validate", "Walk the forwarding tables only, as ibtracert does; ask no agent.").BoolVar(&o.noValidate)
	app.Flag("Ca", "The CA to use, as ibtracert's -C (the same as --ib.ca).").Short('C').PlaceHolder("CA").StringVar(&o.caAlias)
	app.Flag("Port", "The CA port to use, as ibtracert's -P (the same as --ib.port).").Short('P').PlaceHolder("PORT").StringVar(&o.portAlias)
	app.Flag("node-name-map", "OFED node-name-map file (lines 0xGUID \"name\"): hops show these site names.").Short('n').PlaceHolder("FILE").StringVar(&o.nameMap)
	app.Flag("lmc-all", "Trace every LID of each destination port (base LID .. base+2^LMC-1) and report the distinct paths and the hops they share.").BoolVar(&o.lmcAll)
	app.Flag("discovery", "How the path is learnt: smp (directed-route SMPs), sa (SA records only, for fabrics where only the SM may send SMPs) or auto (SMPs, falling back to the SA when they are refused at the first hop).").Default("auto").EnumVar(&o.discovery, "smp", "sa", "auto")
	addHealthFlags(app, &o.health)
	app.Arg("lids", "ibtracert's forms: DST_LID, or SRC_LID DST_LID to trace from another port.").StringsVar(&o.positional)
	app.Version(version())
	helped := false
	app.Terminate(func(int) { helped = true })
	if _, err := app.Parse(args); err != nil {
		fmt.Fprintf(stderr, "ibtracer: %v; see ibtracer --help\n", err)
		return exitUsage
	}
	if helped {
		return 0
	}
	if err := o.aliases(); err != nil {
		fmt.Fprintf(stderr, "ibtracer: %v; see ibtracer --help\n", err)
		return exitUsage
	}
	dests, err := o.destinations()
	if err != nil {
		fmt.Fprintf(stderr, "ibtracer: %v; see ibtracer --help\n", err)
		return exitUsage
	}
	hopts, health, err := o.health.options()
	if err != nil {
		fmt.Fprintf(stderr, "ibtracer: %v\n", err)
		return exitUsage
	}
	var names nodenamemap.Map
	if o.nameMap != "" {
		if names, err = nodenamemap.Load(o.nameMap); err != nil {
			fmt.Fprintf(stderr, "ibtracer: --node-name-map: %v\n", err)
			return exitUsage
		}
	}
	oui, err := strconv.ParseUint(strings.TrimPrefix(o.oui, "0x"), 16, 32)
	if err != nil || oui == 0 || oui > 0xFFFFFF {
		fmt.Fprintf(stderr, "ibtracer: --oui %q: want a 24-bit hex number such as 0x001405\n", o.oui)
		return exitUsage
	}

	opened, err := o.ib.Open(false)
	if err != nil {
		fmt.Fprintf(stderr, "ibtracer: %v\n", err)
		return exitDevice
	}
	defer opened.Close()
	timeout := time.Duration(o.timeoutMS) * time.Millisecond
	retries := o.retries
	if retries == 0 {
		retries = -1
	}
	e := ibmad.NewEngine(opened.Transport, ibmad.Options{Timeout: timeout, Retries: retries})
	defer e.Close()
	tr := trace.New(e, trace.Options{Timeout: timeout, Retries: retries, OUI: ibmad.OUI(oui), SL: uint8(o.sl), NoValidate: o.noValidate,
		Discovery: trace.Discovery(o.discovery)})

	var hc *linkhealth.Checker
	if health {
		hc = linkhealth.NewChecker(tr, hopts)
	}
	ctx := context.Background()
	if o.all {
		all, err := tr.AllCAPorts(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "ibtracer: --all: %v\n", err)
			return exitResolve
		}
		src, err := e.Port()
		if err != nil {
			fmt.Fprintf(stderr, "ibtracer: %v\n", err)
			return exitDevice
		}
		dests = append(dests, skipSource(all, src)...)
	}
	if o.lmcAll {
		if health {
			fmt.Fprintln(stderr, "ibtracer: --health (and --expect-*, --pm, --threshold-file) does not combine with --lmc-all; trace one LID with --health")
			return exitUsage
		}
		return runLMC(ctx, tr, &o, dests, names, stdout, stderr)
	}
	var prog *progress
	if o.all && isTerminal(stderr) {
		prog = &progress{w: stderr, total: len(dests)}
	}
	results := make([]*trace.Result, len(dests))
	each(len(dests), o.concurrency, func(i int) {
		if o.from != 0 {
			results[i] = tr.TraceFrom(ctx, o.from, dests[i])
		} else {
			results[i] = tr.Trace(ctx, dests[i])
		}
		prog.done(results[i])
	})
	prog.finish()
	var healths []*linkhealth.PathHealth
	if hc != nil {
		healths = checkAll(ctx, hc, results, o.health.pmInterval, o.concurrency)
	}
	nameHops(names, results)

	out := output{n: len(results), totals: results,
		json: func() any { return withHealth(results, healths) },
		verbose: func(w io.Writer, i int) {
			results[i].WriteVerbose(w)
			if healths != nil {
				writeHealthVerbose(w, healths[i])
			}
		},
		summary: func(w io.Writer, i int) {
			fmt.Fprintln(w, results[i].Summary())
			if healths != nil {
				fmt.Fprintln(w, "  "+healthSummary(healths[i]))
			}
		}}
	if !out.print(&o, stdout, stderr) {
		return exitDevice
	}
	return exitCode(results, healths)
}

// exitCode: a mismatch (or, with --health, an unhealthy link) wins;
// otherwise the highest status.
func exitCode(rs []*trace.Result, hs []*linkhealth.PathHealth) int {
	code := exitOK
	for i, r := range rs {
		c := resultExit(r)
		if hs != nil {
			c = healthExit(c, hs[i])
		}
		if c == exitMismatch {
			return c
		}
		if c > code {
			code = c
		}
	}
	return code
}

func (o *options) destinations() ([]trace.Destination, error) {
	var ds []trace.Destination
	switch len(o.positional) {
	case 0:
	case 1, 2:
		for i, s := range o.positional {
			v, ok := parseLID(s)
			if !ok {
				return nil, fmt.Errorf("%q: want a unicast LID 1..49151 (ibtracer [SRC_LID] DST_LID)", s)
			}
			if i == 0 && len(o.positional) == 2 {
				o.from = uint16(v)
				continue
			}
			ds = append(ds, trace.Destination{LID: uint16(v)})
		}
	default:
		return nil, fmt.Errorf("%d LIDs given: want DST_LID or SRC_LID DST_LID", len(o.positional))
	}
	if o.from != 0 && o.discovery == "sa" {
		return nil, fmt.Errorf("--discovery=sa traces from the local port: give no SRC_LID with it")
	}
	if o.from != 0 && o.all {
		return nil, fmt.Errorf("--all traces from the local port: give no SRC_LID with it")
	}
	for _, s := range o.lids {
		v, ok := parseLID(s)
		if !ok {
			return nil, fmt.Errorf("-l %q: want a unicast LID 1..49151", s)
		}
		ds = append(ds, trace.Destination{LID: uint16(v)})
	}
	for _, s := range o.gids {
		g, err := ibmad.ParseGID(s)
		if err != nil {
			return nil, fmt.Errorf("-g: %v", err)
		}
		ds = append(ds, trace.Destination{GID: g})
	}
	for _, s := range o.guids {
		g, err := ibmad.ParseGUID(s)
		if err != nil || g == 0 {
			return nil, fmt.Errorf("-G %q: want a port GUID such as 0x0002c90300a1b2c3", s)
		}
		ds = append(ds, trace.Destination{GUID: g})
	}
	if len(o.nodePorts) > 0 && len(o.nodePorts) != 1 && len(o.nodePorts) != len(o.nodes) || len(o.nodePorts) > 0 && len(o.nodes) == 0 {
		return nil, fmt.Errorf("--port: give it with --node, once for all of them or once per --node (%d --node, %d --port)", len(o.nodes), len(o.nodePorts))
	}
	ports := make([]uint8, len(o.nodePorts))
	for i, s := range o.nodePorts {
		v, err := strconv.ParseUint(s, 10, 8)
		if err != nil || v < 1 || v > 254 {
			return nil, fmt.Errorf("--port %q: want a port number 1..254", s)
		}
		ports[i] = uint8(v)
	}
	for i, s := range o.nodes {
		if s == "" || len(s) > ibmad.NodeDescriptionSize {
			return nil, fmt.Errorf("--node %q: want a node description of 1..64 bytes", s)
		}
		d := trace.Destination{Node: s}
		switch len(ports) {
		case 0:
		case 1:
			d.Port = ports[0]
		default:
			d.Port = ports[i]
		}
		ds = append(ds, d)
	}
	if len(ds) == 0 && !o.all {
		return nil, fmt.Errorf("no destination: give -l LID, -g GID, -G GUID, --node NAME or --all")
	}
	return ds, nil
}

// parseLID reads a unicast LID, in decimal or 0x hex (internal/strictint).
func parseLID(s string) (uint16, bool) {
	v, err := strictint.Parse(s)
	if err != nil || !strictint.InRange(v, 1, 0xBFFF) {
		return 0, false
	}
	return uint16(v.Int64()), true
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
