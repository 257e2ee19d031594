package main

import (
	"io"
	"strconv"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/ibtracer/ibtracer_exporter/docs"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/internal/ibopen"
	"github.com/ibtracer/ibtracer_exporter/internal/manpage"
	"github.com/ibtracer/ibtracer_exporter/internal/strictint"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// options holds the flags and arguments as given.
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
	plan        string // --plan FILE: judge the crossed links against this cabling plan (plan.go)
	writePlan   bool   // --write: write --plan's FILE from the crossed links instead
}

// newApp defines the command's flags and arguments over o; the usage
// goes to stdout, the errors to stderr.
func (o *options) newApp(stdout, stderr io.Writer) *kingpin.Application {
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
	app.Flag("plan", "Judge every link the traced paths cross (default: --all) against this cabling plan, ibnetdiscover's output or an ibdm topology file (ibdiagnet -wt): planned, miswired, below plan, not in plan. Exit status 1 when a link is not as planned.").PlaceHolder("FILE").StringVar(&o.plan)
	app.Flag("write", "With --plan FILE: write FILE, in ibnetdiscover's form, from the links the traced paths cross, instead of judging them.").BoolVar(&o.writePlan)
	app.Arg("lids", "ibtracert's forms: DST_LID, or SRC_LID DST_LID to trace from another port.").StringsVar(&o.positional)
	app.Version(version())
	return app
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
