// Command ibtracer traces the route packets take to InfiniBand
// destinations, hop by hop, and has the vendor agent at every hop that
// runs one confirm the port the packet arrived on (the 2005 OpenIB
// "ibtracer" design).
//
//	ibtracer [-I ca] [-p port] [-r retries] [-t timeout_ms] (-l LID | -g DGID | -G GUID | --node NAME [--port N] | --all) [-v]
//
// Exit status: 0 every destination traced and valid, 1 a port mismatch
// (status 7) was found, 2 bad usage, 3 a path over 64 hops, 4 unreachable
// (no route, link down, timeout), 5 SA resolution failed, 6 device or
// transport error. With several destinations, a mismatch wins; otherwise
// the highest status.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/internal/ibopen"
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
	sl          uint8
	format      string
	concurrency int
	noValidate  bool
}

func run(args []string, stdout, stderr io.Writer) int {
	var o options
	app := kingpin.New("ibtracer", "Trace InfiniBand routes hop by hop and validate every hop with the ibtracer vendor agent.")
	app.UsageWriter(stdout)
	app.ErrorWriter(stderr)
	app.HelpFlag.Short('h')
	ibopen.AddFlags(app, &o.ib, true)
	app.Flag("retries", "Retries per MAD (per hop).").Short('r').Default("2").IntVar(&o.retries)
	app.Flag("timeout", "Timeout per MAD attempt, in milliseconds.").Short('t').Default("1000").IntVar(&o.timeoutMS)
	app.Flag("lid", "Destination LID (repeatable).").Short('l').StringsVar(&o.lids)
	app.Flag("gid", "Destination GID (repeatable), resolved through the SA.").Short('g').StringsVar(&o.gids)
	app.Flag("guid", "Destination port GUID (repeatable), resolved through the SA.").Short('G').StringsVar(&o.guids)
	app.Flag("node", "Destination node description (repeatable), resolved through the SA.").Short('N').StringsVar(&o.nodes)
	app.Flag("port", "Port of the --node to trace (1..254; default: its first active port). Once for every --node, or once per --node in order. Not the local port: that is -p/--ib.port.").StringsVar(&o.nodePorts)
	app.Flag("all", "Trace every CA port the SA knows.").BoolVar(&o.all)
	app.Flag("verbose", "Print the whole path, one line per hop, with the agent's verdict.").Short('v').BoolVar(&o.verbose)
	app.Flag("oui", "OUI of the ibtracer vendor class.").Default("0x001405").StringVar(&o.oui)
	app.Flag("sl", "Service level of LID-routed MADs.").Default("0").Uint8Var(&o.sl)
	app.Flag("format", "Output format: text or json.").Default("text").EnumVar(&o.format, "text", "json")
	app.Flag("concurrency", "Destinations traced at once.").Default("32").IntVar(&o.concurrency)
	app.Flag("no-validate", "Walk the forwarding tables only, as ibtracert does; ask no agent.").BoolVar(&o.noValidate)
	app.Version(version())
	helped := false
	app.Terminate(func(int) { helped = true })
	if _, err := app.Parse(args); err != nil {
		fmt.Fprintf(stderr, "ibtracer: %v; see ibtracer --help\n", err)
		return trace.ExitUsage
	}
	if helped {
		return 0
	}
	dests, err := o.destinations()
	if err != nil {
		fmt.Fprintf(stderr, "ibtracer: %v; see ibtracer --help\n", err)
		return trace.ExitUsage
	}
	oui, err := strconv.ParseUint(strings.TrimPrefix(o.oui, "0x"), 16, 32)
	if err != nil || oui == 0 || oui > 0xFFFFFF {
		fmt.Fprintf(stderr, "ibtracer: --oui %q: want a 24-bit hex number such as 0x001405\n", o.oui)
		return trace.ExitUsage
	}
	if o.timeoutMS <= 0 || o.retries < 0 || o.concurrency <= 0 {
		fmt.Fprintln(stderr, "ibtracer: --timeout and --concurrency must be positive and --retries not negative")
		return trace.ExitUsage
	}

	opened, err := o.ib.Open(false)
	if err != nil {
		fmt.Fprintf(stderr, "ibtracer: %v\n", err)
		return trace.ExitDevice
	}
	defer opened.Close()
	timeout := time.Duration(o.timeoutMS) * time.Millisecond
	retries := o.retries
	if retries == 0 {
		retries = -1
	}
	e := ibmad.NewEngine(opened.Transport, ibmad.Options{Timeout: timeout, Retries: retries})
	defer e.Close()
	tr := trace.New(e, trace.Options{Timeout: timeout, Retries: retries, OUI: ibmad.OUI(oui), SL: o.sl, NoValidate: o.noValidate})

	ctx := context.Background()
	if o.all {
		all, err := tr.AllCAPorts(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "ibtracer: --all: %v\n", err)
			return trace.ExitResolve
		}
		dests = append(dests, all...)
	}
	results := make([]*trace.Result, len(dests))
	sem := make(chan struct{}, o.concurrency)
	var wg sync.WaitGroup
	for i, d := range dests {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int, d trace.Destination) {
			defer wg.Done()
			defer func() { <-sem }()
			results[i] = tr.Trace(ctx, d)
		}(i, d)
	}
	wg.Wait()

	switch {
	case o.format == "json":
		if err := trace.WriteJSON(stdout, results); err != nil {
			fmt.Fprintf(stderr, "ibtracer: %v\n", err)
			return trace.ExitDevice
		}
	case o.verbose:
		for i, r := range results {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			r.WriteVerbose(stdout)
		}
	default:
		for _, r := range results {
			fmt.Fprintln(stdout, r.Summary())
		}
	}
	return exitCode(results)
}

// exitCode: a mismatch wins; otherwise the highest status.
func exitCode(rs []*trace.Result) int {
	code := trace.ExitOK
	for _, r := range rs {
		c := r.ExitCode()
		if c == trace.ExitMismatch {
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
	for _, s := range o.lids {
		v, err := strconv.ParseUint(s, 0, 16)
		if err != nil || v == 0 || v >= 0xC000 {
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
