package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/internal/ibopen"
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

// onOpened, when set (by tests only), is told the transport a run has
// opened, before the run sends anything: a test reaches the simulated
// fabric of --ib.transport=sim through it.
var onOpened func(*ibopen.Opened)

func run(args []string, stdout, stderr io.Writer) int {
	var o options
	app := o.newApp(stdout, stderr)
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
	if health || o.plan != "" { // --plan judges the width and speed health reads
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
	if o.plan != "" {
		return runPlan(&o, u, results, healths, mads, stdout, stderr) // plan.go
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
