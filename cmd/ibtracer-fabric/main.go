package main

import (
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"syscall"

	promversion "github.com/prometheus/common/version"

	"github.com/alecthomas/kingpin/v2"

	"github.com/ibtracer/ibtracer_exporter/ibmad/sim/simserve"
	"github.com/ibtracer/ibtracer_exporter/internal/ibopen"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, nil)) }

// run serves until a signal arrives or stop is closed.
func run(args []string, stdout, stderr io.Writer, stop <-chan struct{}) int {
	var c ibopen.Config
	var sock string
	var verbose bool
	var heapProfile string
	app := kingpin.New("ibtracer-fabric", "Serve a simulated InfiniBand fabric over the ibsim socket protocol.")
	app.UsageWriter(stdout)
	app.ErrorWriter(stderr)
	app.HelpFlag.Short('h')
	app.Version(promversion.Print("ibtracer-fabric"))
	ibopen.AddSimFlags(app, &c)
	app.Flag("sock.name", "Base name of the abstract sockets (@NAME:ctl); default $IBSIM_SOCKNAME, else \"sim\".").
		StringVar(&sock)
	app.Flag("verbose", "Log every client that attaches or detaches.").Short('v').BoolVar(&verbose)
	app.Flag("heap.profile", "Write a heap profile of this process (the fabric's memory) to this file when it stops.").
		StringVar(&heapProfile)
	if _, err := app.Parse(args); err != nil {
		fmt.Fprintf(stderr, "ibtracer-fabric: %v\n", err)
		return 2
	}
	logger := log.New(stderr, "", log.LstdFlags)
	o, err := c.OpenFabric()
	if err != nil {
		fmt.Fprintf(stderr, "ibtracer-fabric: %v\n", err)
		return 1
	}
	defer o.Close()
	so := simserve.Options{SockName: sock, DefaultNode: o.Node}
	if verbose {
		so.Logf = logger.Printf
	}
	srv, err := simserve.Listen(o.Fabric, so)
	if err != nil {
		fmt.Fprintf(stderr, "ibtracer-fabric: %v\n", err)
		return 1
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve() }()
	fmt.Fprintf(stdout, "ibtracer-fabric: serving %d nodes at @%s:ctl (IBSIM_SOCKNAME=%s); default node %q\n",
		len(o.Fabric.Nodes()), srv.SockName(), srv.SockName(), srv.DefaultNode())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sig)
	code := 0
	select {
	case s := <-sig:
		if verbose {
			logger.Printf("ibtracer-fabric: %v: stopping", s)
		}
	case <-stop:
	case err := <-done:
		fmt.Fprintf(stderr, "ibtracer-fabric: %v\n", err)
		code = 1
	}
	if heapProfile != "" {
		if err := writeHeapProfile(heapProfile); err != nil {
			fmt.Fprintf(stderr, "ibtracer-fabric: heap profile: %v\n", err)
			code = 1
		}
	}
	srv.Close()
	return code
}

// writeHeapProfile writes the live heap after a collection.
func writeHeapProfile(path string) error {
	runtime.GC()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
