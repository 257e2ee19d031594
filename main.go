// Command ibtracer_exporter traces a YAML list of InfiniBand destinations
// on a schedule, hop by hop, validating every hop with the ibtracer vendor
// agent, hosts that agent itself, and exports what it finds as Prometheus
// metrics (design §6).
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"
	"github.com/prometheus/exporter-toolkit/web/kingpinflag"
	sloggokit "github.com/tjhop/slog-gokit"

	"github.com/ibtracer/ibtracer_exporter/agent"
	"github.com/ibtracer/ibtracer_exporter/collector"
	"github.com/ibtracer/ibtracer_exporter/collector/config"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/internal/ibopen"
)

func main() { os.Exit(run()) }

type flags struct {
	configFile  string
	logLevel    string
	logFormat   string
	agent       bool
	simFaults   bool
	maxRequests int
	retryDevice time.Duration
	ib          ibopen.Config
}

func run() int {
	var f flags
	app := kingpin.New("ibtracer_exporter", "Traces InfiniBand routes hop by hop, validates every hop with the ibtracer vendor agent, hosts that agent, and exports Prometheus metrics.")
	app.Flag("config.file", "Configuration file (YAML).").Default("ibtracer.yml").StringVar(&f.configFile)
	webFlags := kingpinflag.AddFlags(app, ":9684")
	app.Flag("web.max-requests", "Maximum concurrent /metrics scrapes (0: no limit).").Default("40").IntVar(&f.maxRequests)
	app.Flag("log.level", "Log level: debug, info, warn, error.").Default("info").EnumVar(&f.logLevel, "debug", "info", "warn", "error")
	app.Flag("log.format", "Log format: logfmt or json.").Default("logfmt").EnumVar(&f.logFormat, "logfmt", "json")
	app.Flag("agent", "Host the ibtracer vendor agent and the ibping responder (--no-agent to turn off).").Default("true").BoolVar(&f.agent)
	app.Flag("sim.faults", "With --ib.transport=sim: inject random faults (drops, link flaps, a diverging switch) so the dashboards have something to show.").BoolVar(&f.simFaults)
	app.Flag("device.retry-interval", "How often to retry opening a missing device.").Default("10s").DurationVar(&f.retryDevice)
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

	logger := newLogger(f.logLevel, f.logFormat)
	slogger := slog.New(sloggokit.NewGoKitHandler(logger, slogLevel(f.logLevel)))
	level.Info(logger).Log("msg", "starting ibtracer_exporter", "version", version.Info(), "transport", f.ib.Transport)

	cfg, err := config.Load(f.configFile)
	if err != nil {
		level.Error(logger).Log("msg", "cannot load the configuration", "err", err)
		return 1
	}
	reg := prometheus.NewRegistry()
	exp := collector.New(logger, "")
	rtt, observe := collector.NewMADRTT()
	reloadOK := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "ibtracer", Name: "config_last_reload_successful",
		Help: "1 if the last configuration reload succeeded."})
	reloadTime := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "ibtracer", Name: "config_last_reload_success_timestamp_seconds",
		Help: "When the configuration was last loaded successfully."})
	reg.MustRegister(exp, rtt, reloadOK, reloadTime, versioncollector.NewCollector("ibtracer"),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reloadOK.Set(1)
	reloadTime.SetToCurrentTime()
	exp.Apply(cfg)

	dev := &device{f: &f, logger: logger, exp: exp, observe: observe, cfg: cfg}
	go dev.open()
	defer dev.close()

	var reloadMu sync.Mutex
	reload := func() error {
		reloadMu.Lock()
		defer reloadMu.Unlock()
		c, err := config.Load(f.configFile)
		if err != nil {
			reloadOK.Set(0)
			level.Error(logger).Log("msg", "configuration reload failed; keeping the old configuration", "err", err)
			return err
		}
		exp.Apply(c)
		reloadOK.Set(1)
		reloadTime.SetToCurrentTime()
		level.Info(logger).Log("msg", "configuration reloaded", "file", f.configFile, "destinations", len(c.Destinations))
		return nil
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		for range hup {
			_ = reload()
		}
	}()

	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError,
		MaxRequestsInFlight: f.maxRequests, EnableOpenMetrics: true}))
	mux.Handle("/traces", exp.TracesHandler())
	mux.HandleFunc("/-/healthy", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "Healthy") })
	mux.HandleFunc("/-/reload", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost && r.Method != http.MethodPut {
			w.Header().Set("Allow", "POST")
			http.Error(w, "use POST to reload the configuration", http.StatusMethodNotAllowed)
			return
		}
		if err := reload(); err != nil {
			http.Error(w, "reload failed: "+err.Error(), http.StatusInternalServerError)
			return
		}
		fmt.Fprintln(w, "reloaded")
	})
	landing, err := web.NewLandingPage(web.LandingConfig{
		Name:        "ibtracer_exporter",
		Description: "InfiniBand route tracer: hop-by-hop paths validated by the ibtracer vendor agent",
		Version:     version.Info(),
		Links: []web.LandingLinks{
			{Address: "/metrics", Text: "Metrics"},
			{Address: "/traces", Text: "Traces", Description: "The latest trace of every destination, as JSON"},
			{Address: "/-/healthy", Text: "Health"},
		},
	})
	if err != nil {
		level.Error(logger).Log("msg", "landing page", "err", err)
		return 1
	}
	mux.Handle("/", landing)

	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- web.ListenAndServe(srv, webFlags, slogger) }()
	term := make(chan os.Signal, 1)
	signal.Notify(term, os.Interrupt, syscall.SIGTERM)
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			level.Error(logger).Log("msg", "web server", "err", err)
			return 1
		}
	case <-term:
		level.Info(logger).Log("msg", "shutting down")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}
	exp.Stop()
	return 0
}

func newLogger(lvl, format string) log.Logger {
	w := log.NewSyncWriter(os.Stderr)
	var l log.Logger
	if format == "json" {
		l = log.NewJSONLogger(w)
	} else {
		l = log.NewLogfmtLogger(w)
	}
	l = log.With(l, "ts", log.DefaultTimestampUTC, "caller", log.Caller(5)) // 5: past the level filter
	return level.NewFilter(l, level.Allow(level.ParseDefault(lvl, level.InfoValue())))
}

func slogLevel(lvl string) slog.Level {
	switch lvl {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}

// device opens the transport, retrying while it is missing, and gives the
// exporter its engine and hosted agent.
type device struct {
	f       *flags
	logger  log.Logger
	exp     *collector.Exporter
	observe func(ibmad.MgmtClass, time.Duration)
	cfg     *config.Config

	mu     sync.Mutex
	opened *ibopen.Opened
	engine *ibmad.Engine
	stop   chan struct{}
	once   sync.Once
}

func (d *device) open() {
	d.stop = make(chan struct{})
	for {
		err := d.tryOpen()
		if err == nil {
			return
		}
		level.Error(d.logger).Log("msg", "cannot open the InfiniBand device; the exporter keeps serving and retries",
			"transport", d.f.ib.Transport, "err", err, "retry_in", d.f.retryDevice)
		d.exp.SetDevice(nil, nil, err)
		select {
		case <-d.stop:
			return
		case <-time.After(d.f.retryDevice):
		}
	}
}

func (d *device) tryOpen() error {
	opened, err := d.f.ib.Open(d.f.agent)
	if err != nil {
		return err
	}
	c := d.cfg
	e := ibmad.NewEngine(opened.Transport, ibmad.Options{Timeout: time.Duration(c.Timeout), MaxOutstanding: c.MADWindow,
		MaxPerTarget: c.MADPerTarget, RTTObserver: d.observe})
	var ag *agent.Agent
	if d.f.agent && *c.Agent.Enabled {
		ag, err = agent.New(e, agent.Config{OUI: ibmad.OUI(c.OUI), RatePerSource: c.Agent.RatePerSource, Burst: c.Agent.Burst,
			Ping: *c.Agent.Ping, Hostname: c.Agent.Hostname})
		if err != nil {
			e.Close()
			opened.Close()
			return err
		}
	}
	port, err := opened.Transport.Port()
	if err == nil {
		d.exp.SetSeed(port.PortGUID.String())
		level.Info(d.logger).Log("msg", "device open", "ca", port.CA, "port", port.PortNum, "lid", port.LID,
			"port_guid", port.PortGUID, "agent", ag != nil)
	}
	d.mu.Lock()
	d.opened, d.engine = opened, e
	d.mu.Unlock()
	d.exp.SetDevice(e, ag, nil)
	if d.f.simFaults && opened.Fabric != nil {
		go injectFaults(opened.Fabric, d.logger, d.stop)
	}
	return nil
}

func (d *device) close() {
	d.once.Do(func() {
		if d.stop != nil {
			close(d.stop)
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.engine != nil {
			d.engine.Close()
		}
		if d.opened != nil {
			d.opened.Close()
		}
	})
}

// injectFaults breaks the simulated fabric now and then, for the demo: a
// lossy link, a link that flaps (the SM re-routes), or a switch whose data
// plane diverges from its forwarding table for a switch LID.
func injectFaults(f *sim.Fabric, logger log.Logger, stop <-chan struct{}) {
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	var switches []*sim.Node
	for _, n := range f.Nodes() {
		if n.IsSwitch() {
			switches = append(switches, n)
		}
	}
	if len(switches) < 2 {
		return
	}
	for {
		select {
		case <-stop:
			return
		case <-time.After(time.Duration(20+rng.IntN(20)) * time.Second):
		}
		sw := switches[rng.IntN(len(switches))]
		var linked []int
		for _, p := range sw.Ports[1:] {
			if p.Remote != nil && p.Remote.Node.IsSwitch() {
				linked = append(linked, int(p.Num))
			}
		}
		if len(linked) == 0 {
			continue
		}
		port := linked[rng.IntN(len(linked))]
		switch rng.IntN(3) {
		case 0:
			_ = f.SetDropRate(sw.Name, port, 0.3)
			level.Info(logger).Log("msg", "sim fault: lossy link", "switch", sw.Name, "port", port)
			go func() { time.Sleep(30 * time.Second); _ = f.SetDropRate(sw.Name, port, 0) }()
		case 1:
			_ = f.SetLinkState(sw.Name, port, false, true)
			level.Info(logger).Log("msg", "sim fault: link down, re-routed", "switch", sw.Name, "port", port)
			go func() { time.Sleep(40 * time.Second); _ = f.SetLinkState(sw.Name, port, true, true) }()
		case 2:
			other := switches[rng.IntN(len(switches))]
			lid, _ := f.LIDOf(other.Name, 0)
			if other == sw || lid == 0 {
				continue
			}
			_ = f.SetForwardOverride(sw.Name, lid, uint8(port))
			level.Info(logger).Log("msg", "sim fault: data plane diverges from the LFT", "switch", sw.Name, "lid", lid, "port", port)
			go func() { time.Sleep(60 * time.Second); f.ClearForwardOverrides(sw.Name) }()
		}
	}
}
