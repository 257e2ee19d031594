package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/go-kit/log/level"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web/kingpinflag"

	"github.com/ibtracer/ibtracer_exporter/collector"
	"github.com/ibtracer/ibtracer_exporter/collector/config"
	"github.com/ibtracer/ibtracer_exporter/collector/pages"
	"github.com/ibtracer/ibtracer_exporter/docs"
	"github.com/ibtracer/ibtracer_exporter/internal/ibopen"
	"github.com/ibtracer/ibtracer_exporter/internal/manpage"
	"github.com/ibtracer/ibtracer_exporter/internal/service"
	"github.com/ibtracer/ibtracer_exporter/internal/strictint"
	"github.com/ibtracer/ibtracer_exporter/internal/webserve"
)

func main() { os.Exit(run()) }

// defaultConfigFile is where the packages install the configuration
// (docs/packaging.md).
const defaultConfigFile = "/etc/ibtracer_exporter/ibtracer.yml"

type flags struct {
	configFile  string
	logLevel    string
	logFormat   string
	agent       bool
	simFaults   bool
	maxRequests int
	retryDevice time.Duration
	ib          ibopen.Config
	web         webserve.Limits
}

func run() int {
	var f flags
	app := kingpin.New("ibtracer_exporter", "Traces InfiniBand routes hop by hop, validates every hop with the ibtracer vendor agent, hosts that agent, and exports Prometheus metrics.")
	manpage.Use("ibtracer_exporter", "Prometheus exporter of InfiniBand paths validated hop by hop, and host of the ibtracer agent", docs.Exporter)
	app.Flag("config.file", "Configuration file (YAML).").Default(defaultConfigFile).StringVar(&f.configFile)
	webFlags := kingpinflag.AddFlags(app, ":9684")
	strictint.IntVar(app.Flag("web.max-requests", "Maximum concurrent /metrics scrapes rendering (0: no limit, at most 10000); more get 503. A scrape's slot is free while its answer is sent.").Default("4"), &f.maxRequests, 0, 10000)
	webserve.AddFlags(app, &f.web)
	app.Flag("log.level", "Log level: debug, info, warn, error.").Default("info").EnumVar(&f.logLevel, "debug", "info", "warn", "error")
	app.Flag("log.format", "Log format: logfmt or json.").Default("logfmt").EnumVar(&f.logFormat, "logfmt", "json")
	app.Flag("agent", "Host the ibtracer vendor agent and the ibping responder (--no-agent to turn off).").Default("true").BoolVar(&f.agent)
	app.Flag("sim.faults", "With --ib.transport=sim: inject random faults (drops, link flaps, a diverging switch) so the dashboards have something to show.").BoolVar(&f.simFaults)
	app.Flag("device.retry-interval", "Longest wait between attempts to open (or reopen) the device.").Default("10s").DurationVar(&f.retryDevice)
	ibopen.AddFlags(app, &f.ib, false)
	app.Version(version.Print("ibtracer_exporter"))
	app.HelpFlag.Short('h')
	checkOnly := app.Flag("config.check", "Validate --config.file, print the result and exit (0 valid, 1 not).").Bool()
	kingpin.MustParse(app.Parse(os.Args[1:]))
	if *checkOnly {
		if err := config.Check(f.configFile); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Fprintf(os.Stdout, "%s: ok\n", f.configFile)
		return 0
	}

	logger, slogger := newLoggers(os.Stderr, f.logLevel, f.logFormat)
	level.Info(logger).Log("msg", "starting ibtracer_exporter", "version", version.Info(), "transport", f.ib.Transport)
	webCopy, err := newWebConfigCopy(*webFlags.WebConfigFile, logger) // webconfig.go
	if err != nil {
		level.Error(logger).Log("msg", "cannot use --web.config.file", "err", err)
		return 1
	}
	if webCopy != nil {
		defer webCopy.Close()
		copyPath := webCopy.Path()
		webFlags.WebConfigFile = &copyPath
	}

	svc, err := service.New(service.Options{ConfigFile: f.configFile, Logger: logger, IB: f.ib, HostAgent: f.agent,
		SimFaults: f.simFaults, RetryInterval: f.retryDevice})
	if err != nil {
		level.Error(logger).Log("msg", "cannot load the configuration", "err", err)
		return 1
	}

	lim, limMetrics := webserve.LimitConns(f.web.MaxConns, logger)
	cs := svc.Collectors()
	if limMetrics != nil {
		cs = append(cs, limMetrics)
	}
	if webCopy != nil {
		cs = append(cs, webCopy.refused)
	}
	reg := collector.NewRegistry(cs...)
	mux := http.NewServeMux()
	mux.Handle("/metrics", collector.MetricsHandler(reg, f.maxRequests, logger))
	mux.Handle("/traces", svc.Exporter().TracesHandler())
	mux.HandleFunc("/-/healthy", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "Healthy") })
	mux.Handle("/-/reload", svc.ReloadHandler())
	mux.Handle("/", svc.Exporter().LandingHandler(pages.Landing{Name: "ibtracer_exporter", Version: version.Info(),
		Description: "InfiniBand route tracer: hop-by-hop paths validated by the ibtracer vendor agent", Links: pages.DefaultLinks}))

	// Serve: the device lifecycle, reloads on SIGHUP, HTTP, until SIGTERM.
	ctx, stop := context.WithCancel(context.Background())
	running := make(chan struct{})
	go func() { svc.Run(ctx); close(running) }()
	if webCopy != nil {
		go webCopy.run(ctx)
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		for range hup {
			_ = svc.Reload()
		}
	}()

	srv := webserve.NewServer(mux, f.web, logger)
	done := make(chan error, 1)
	go func() { done <- serve(srv, webFlags, lim, slogger) }()
	term := make(chan os.Signal, 1)
	signal.Notify(term, os.Interrupt, syscall.SIGTERM)
	code := 0
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			level.Error(logger).Log("msg", "web server", "err", err)
			code = 1
		}
	case <-term:
		level.Info(logger).Log("msg", "shutting down")
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}
	stop()
	<-running
	return code
}
