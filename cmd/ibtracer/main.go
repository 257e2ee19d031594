package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/ibtracer/ibtracer_exporter/docs"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/internal/ibopen"
	"github.com/ibtracer/ibtracer_exporter/internal/manpage"
	"github.com/ibtracer/ibtracer_exporter/internal/nodenamemap"
	"github.com/ibtracer/ibtracer_exporter/internal/strictint"
	"github.com/ibtracer/ibtracer_exporter/linkhealth"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

func main() {
	// A reader gone away (ibtracer --all | true) is an output that could
	// not be written, exit 6 with one line on stderr (output.go), not a
	// silent death by SIGPIPE: ignored, a write to the closed pipe fails
	// with EPIPE like any other write.
	signal.Ignore(syscall.SIGPIPE)
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

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
	slSet       bool // --sl given: it wins over a PathRecord's SL
	format      string
	concurrency int
	noValidate  bool
	validate    string // auto, agent, sma or off (trace.ValidateMode)
	positional  []string
	caAlias     string
	portAlias   string
	nameMap     string
	from        uint16 // SRC_LID of the SRC DST form; 0: the local port
	lmcAll      bool   // every LID of each destination port (lmc.go)
	discovery   string // smp, sa or auto (trace.Discovery)
	health      healthFlags
	mlid        string // -m: trace the multicast path of this MLID (multicast.go)
	via         string // --via NODE:PORT, the node by GUID or name: the destinations whose path crosses that link (via.go)
}

// onOpened, when set (by tests only), is told the transport a run has
// opened, before the run sends anything: a test reaches the simulated
// fabric of --ib.transport=sim through it.
var onOpened func(*ibopen.Opened)

func run(args []string, stdout, stderr io.Writer) int {
	var o options
	app := kingpin.New("ibtracer", "Trace InfiniBand routes hop by hop and validate every hop with the ibtracer vendor agent.")
	manpage.Use("ibtracer", "trace InfiniBand routes hop by hop and validate every hop", docs.CLI)
	app.UsageWriter(stdout)
	app.ErrorWriter(stderr)
	app.HelpFlag.Short('h')
	ibopen.AddFlags(app, &o.ib, true)
	strictint.IntVar(app.Flag("retries", "Retries per MAD (per hop), 0..10; 0: send each MAD once.").Short('r').Default(strconv.Itoa(ibmad.DefaultRetries)), &o.retries, 0, 10)
	strictint.IntVar(app.Flag("timeout", "Timeout per MAD attempt, in milliseconds (1..60000).").Short('t').Default(strconv.Itoa(int(ibmad.DefaultTimeout/time.Millisecond))), &o.timeoutMS, 1, 60000)
	app.Flag("lid", "Destination LID (repeatable).").Short('l').StringsVar(&o.lids)
	app.Flag("gid", "Destination GID (repeatable), resolved through the SA.").Short('g').StringsVar(&o.gids)
	app.Flag("guid", "Destination port GUID (repeatable), resolved through the SA.").Short('G').StringsVar(&o.guids)
	app.Flag("node", "Destination node description (repeatable), resolved through the SA.").Short('N').StringsVar(&o.nodes)
	app.Flag("port", "Port of the --node to trace (1..254; default: its first active port). Once for every --node, or once per --node in order. Not the local port: that is -p/--ib.port.").StringsVar(&o.nodePorts)
	app.Flag("all", "Trace every CA port the SA knows but the local one; progress on a terminal, totals at the end.").BoolVar(&o.all)
	app.Flag("verbose", "Print the whole path, one line per hop, with the agent's verdict.").Short('v').BoolVar(&o.verbose)
	app.Flag("oui", "OUI of the ibtracer vendor class.").Default("0x001405").StringVar(&o.oui)
	strictint.IntVar(app.Flag("sl", "Service level of the validation MADs and of --pm's PerfMgt reads (0..15); default: a GID, GUID or node destination's PathRecord SL, 0 for a LID.").Default("0").IsSetByUser(&o.slSet), &o.sl, 0, 15)
	app.Flag("format", "Output format: text or json.").Default("text").EnumVar(&o.format, "text", "json")
	strictint.IntVar(app.Flag("concurrency", "Destinations traced at once (1..4096).").Default("32"), &o.concurrency, 1, 4096)
	app.Flag("no-validate", "Walk the forwarding tables only, as ibtracert does; ask no agent (the same as --validate=off).").BoolVar(&o.noValidate)
	app.Flag("validate", "Who validates each hop's ingress port: auto (our agent where one answers, the node's SMA elsewhere), agent, sma (a LID-routed NodeInfo only) or off.").Default("auto").EnumVar(&o.validate, "auto", "agent", "sma", "off")
	app.Flag("Ca", "The CA to use, as ibtracert's -C (the same as --ib.ca).").Short('C').PlaceHolder("CA").StringVar(&o.caAlias)
	app.Flag("Port", "The CA port to use, as ibtracert's -P (the same as --ib.port).").Short('P').PlaceHolder("PORT").StringVar(&o.portAlias)
	app.Flag("node-name-map", "OFED node-name-map file (lines 0xGUID \"name\"): hops show these site names.").Short('n').PlaceHolder("FILE").StringVar(&o.nameMap)
	app.Flag("lmc-all", "Trace every LID of each destination port (base LID .. base+2^LMC-1) and report the distinct paths and the hops they share.").BoolVar(&o.lmcAll)
	app.Flag("discovery", "How the path is learnt: smp (directed-route SMPs), sa (SA records only, for fabrics where only the SM may send SMPs) or auto (SMPs, falling back to the SA when they are refused at the first hop).").Default("auto").EnumVar(&o.discovery, "smp", "sa", "auto")
	addHealthFlags(app, &o.health)
	app.Flag("mlid", "Trace the multicast path of this MLID (0xC000..0xFFFE) from SRC_LID (or the local port) to DST_LID over the MFTs, as ibtracert -m; no hop is validated.").Short('m').PlaceHolder("MLID").StringVar(&o.mlid)
	app.Flag("via", "List the destinations (default: --all) whose path crosses the link with this end, NODE:PORT: the node by 0x hex node GUID, or by its node-name-map name or node description (one node's), the port 1..254; and the hop where.").PlaceHolder("NODE:PORT").StringVar(&o.via)
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
	u, code := o.checkUsage(stderr)
	if code != 0 {
		return code
	}
	hopts, health, via, dests, mlid, names := u.hopts, u.health, u.via, u.dests, u.mlid, u.names

	opened, err := o.ib.Open(false)
	if err != nil {
		fmt.Fprintf(stderr, "ibtracer: %v\n", err)
		return exitDevice
	}
	defer opened.Close()
	if onOpened != nil {
		onOpened(opened)
	}
	topts := o.traceOptions(u.oui)
	e := ibmad.NewEngine(opened.Transport, ibmad.Options{Timeout: topts.Timeout, Retries: o.retries, NoRetry: o.retries == 0})
	defer e.Close()
	meter := newMADMeter(e) // the run's MADs, for --all's totals (mads.go)
	tr := trace.New(e, topts)

	var hc *linkhealth.Checker
	if health {
		hc = linkhealth.NewChecker(tr, hopts)
	}
	ctx := context.Background()
	if mlid != 0 {
		return runMulticast(ctx, tr, &o, mlid, dests[0], names, stdout, stderr)
	}
	var prog *progress
	if o.all && isTerminal(stderr) {
		prog = &progress{w: stderr, total: len(dests)}
	}
	dests, results, code := allDestinations(ctx, tr, &o, dests, prog, stderr) // allstream.go
	if code != 0 {
		return code
	}
	if o.lmcAll {
		prog.finish()
		return runLMC(ctx, tr, &o, meter, dests, results, names, stdout, stderr)
	}
	if results == nil {
		results = make([]*trace.Result, len(dests))
		each(len(dests), o.concurrency, func(i int) {
			results[i] = traceOne(ctx, tr, &o, dests[i])
			prog.done(results[i])
		})
	}
	prog.finish()
	var healths []*linkhealth.PathHealth
	mads := runMADs{sent: meter.sent()}
	if hc != nil {
		healths = checkAll(ctx, hc, results, o.health.pmInterval, o.concurrency)
		traced := mads.sent
		mads.sent = meter.sent()
		mads.health = mads.sent - traced
	}
	nameHops(names, results)
	if names != nil {
		for _, ph := range healths {
			ph.NameEnds(names.Name)
		}
	}
	if o.via != "" {
		l, label, err := resolveVia(via, names, results) // via.go
		if err != nil {
			fmt.Fprintf(stderr, "ibtracer: %v\n", err)
			return exitUsage
		}
		return printVia(&o, l, label, results, mads, stdout, stderr)
	}

	out := output{n: len(results), totals: results, mads: mads,
		jsonItem: func(i int) any {
			j := jsonWithHealth{JSONResult: results[i].JSON()}
			if healths != nil {
				j.Health = healths[i]
			}
			return j
		},
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

// shareForRun is how long the facts a run's walks read, and the hops'
// verdicts, serve its other traces (trace.Options.ShareFacts and
// ShareValidation): longer than any run, so each is asked once per run
// (docs/architecture.md, "Facts shared by a run"). A destination's own
// DLID is never a shared verdict.
const shareForRun = 24 * time.Hour

// traceOptions is the flags as trace.Options, with the meanings the
// exporter's configuration gives the same knobs (config.TraceOptions):
// --retries 0 sends each MAD once. The caches keep trace's defaults; the facts
// the walks read are shared for the run.
func (o *options) traceOptions(oui ibmad.OUI) trace.Options {
	sl, validate := trace.DefaultSL(uint8(o.sl)), trace.ValidateMode(o.validate)
	if o.slSet {
		sl = trace.FixedSL(uint8(o.sl)) // --sl given wins over a PathRecord's
	}
	if o.noValidate {
		validate = trace.ValidateOff
	}
	return trace.Options{
		Timeout:         time.Duration(o.timeoutMS) * time.Millisecond,
		Retries:         new(o.retries),
		OUI:             oui,
		SL:              sl,
		Validate:        validate,
		Discovery:       trace.Discovery(o.discovery),
		ShareFacts:      shareForRun,
		ShareValidation: shareForRun,
	}
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

// usage is what the flags say once checked: what to trace and how.
type usage struct {
	hopts  linkhealth.Options
	health bool
	via    trace.LinkRef
	dests  []trace.Destination
	mlid   uint16 // -m; 0: unicast
	names  nodenamemap.Map
	oui    ibmad.OUI
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
	u.hopts, u.health, u.via, err = o.healthAndVia() // via.go
	if err != nil {
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
