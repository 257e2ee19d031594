package service

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"reflect"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibtracer/ibtracer_exporter/agent"
	"github.com/ibtracer/ibtracer_exporter/collector"
	"github.com/ibtracer/ibtracer_exporter/collector/config"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/ibmad/umad"
	"github.com/ibtracer/ibtracer_exporter/internal/ibopen"
)

// Options configure a Service.
type Options struct {
	ConfigFile string
	Logger     log.Logger
	// IB selects the transport; Open, if set, replaces IB.Open (tests).
	IB   ibopen.Config
	Open func(acceptRequests bool) (*ibopen.Opened, error)
	// HostAgent is --agent: the device is opened to accept requests and
	// the agent runs when the configuration's agent.enabled says so.
	HostAgent bool
	// SimFaults runs the simulated fabric's chaos schedule (sim only).
	SimFaults bool
	// RetryInterval is the longest wait between two attempts to open the
	// device (default 10s); the first retry comes after at most 1s and
	// the wait doubles from there.
	RetryInterval time.Duration
}

// Service is the running exporter minus its HTTP server.
type Service struct {
	o       Options
	logger  log.Logger
	exp     *collector.Exporter
	rtt     prometheus.Collector
	observe func(ibmad.MgmtClass, time.Duration)

	reloadOK, reloadTime prometheus.Gauge
	losses               prometheus.Counter

	mu     sync.Mutex // guards cfg, dev and devErr, and serialises reloads and device changes
	cfg    *config.Config
	dev    *device // nil: none open
	devErr error   // why there is no device (dev nil; nil: not opened yet)
}

// device is one open transport with its engine and hosted agent.
type device struct {
	opened *ibopen.Opened
	engine *ibmad.Engine
	agent  *agent.Agent
	since  time.Time
	stop   context.CancelFunc // the chaos schedule
}

// New loads the configuration and starts its destinations; Run opens the
// device.
func New(o Options) (*Service, error) {
	if o.Logger == nil {
		o.Logger = log.NewNopLogger()
	}
	if o.RetryInterval <= 0 {
		o.RetryInterval = 10 * time.Second
	}
	if o.Open == nil {
		o.Open = o.IB.Open
	}
	cfg, err := config.Load(o.ConfigFile)
	if err != nil {
		return nil, err
	}
	s := &Service{o: o, logger: o.Logger, exp: collector.New(o.Logger, ""), cfg: cfg}
	s.rtt, s.observe = collector.NewMADRTT()
	s.reloadOK = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "ibtracer", Name: "config_last_reload_successful",
		Help: "1 if the last configuration reload succeeded."})
	s.reloadTime = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "ibtracer", Name: "config_last_reload_success_timestamp_seconds",
		Help: "When the configuration was last loaded successfully."})
	s.losses = prometheus.NewCounter(prometheus.CounterOpts{Namespace: "ibtracer", Name: "device_losses_total",
		Help: "Times the open InfiniBand device (or simulator) was lost and had to be reopened."})
	s.reloadOK.Set(1)
	s.reloadTime.SetToCurrentTime()
	s.exp.Install(collector.Runtime{Config: cfg})
	return s, nil
}

// install hands the exporter the configuration and the device whole
// (s.mu held): the one place the exporter learns of either.
func (s *Service) install() {
	r := collector.Runtime{Config: s.cfg, DeviceErr: s.devErr}
	if s.dev != nil && s.devErr == nil {
		r.Engine, r.Agent = s.dev.engine, s.dev.agent
	}
	s.exp.Install(r)
}

// Collectors returns the service's metrics: the exporter's, the MAD RTT
// histogram, the reload gauges and the device-loss counter.
func (s *Service) Collectors() []prometheus.Collector {
	return []prometheus.Collector{s.exp, s.rtt, s.reloadOK, s.reloadTime, s.losses}
}

// Exporter returns the collector.
func (s *Service) Exporter() *collector.Exporter { return s.exp }

// Run keeps the device open until ctx ends: it opens it, retrying with
// backoff while it is missing, watches it, and reopens it when it is lost.
// When ctx ends it stops the destinations and closes the device.
func (s *Service) Run(ctx context.Context) {
	defer func() {
		s.exp.Stop()
		s.mu.Lock()
		s.closeDevice()
		s.mu.Unlock()
	}()
	first := min(time.Second, s.o.RetryInterval)
	wait := first
	said := "" // the open error last logged at error level
	for {
		next := wait
		d, err := s.open()
		if err != nil {
			// A condition is said once at error level; while it stays
			// the same, the retries log at debug (docs/runbook.md,
			// IBTracerDeviceDown). A port that is RoCE stays RoCE: retry
			// it slowly.
			if errors.Is(err, umad.ErrRoCEPort) {
				next = roceRetryFactor * s.o.RetryInterval
			}
			lvl := level.Error
			if err.Error() == said {
				lvl = level.Debug
			}
			said = err.Error()
			lvl(s.logger).Log("msg", "cannot open the InfiniBand device; the exporter keeps serving and retries",
				"transport", s.o.IB.Transport, "err", err, "retry_in", next)
			s.mu.Lock()
			s.devErr = err
			s.install()
			s.mu.Unlock()
		} else {
			said = ""
			select {
			case <-ctx.Done():
				return
			case <-d.engine.Lost():
			}
			err = d.engine.Err()
			s.losses.Inc()
			level.Error(s.logger).Log("msg", "InfiniBand device lost; reopening it", "err", err, "retry_in", wait)
			s.mu.Lock() // a reload must not hand the exporter this engine again
			s.devErr = err
			s.install()
			if s.dev == d {
				s.closeDevice()
			}
			s.mu.Unlock()
			if time.Since(d.since) > time.Minute {
				wait = first // it ran a while: this is a new incident
			}
		}
		t := time.NewTimer(next)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, s.o.RetryInterval)
	}
}

// roceRetryFactor: a RoCE-only port is retried every 6 retry intervals
// (a minute by default): it is a configuration, not an outage.
const roceRetryFactor = 6

// open opens the transport, its engine and the hosted agent the running
// configuration asks for, and hands them to the exporter.
func (s *Service) open() (*device, error) {
	opened, err := s.o.Open(s.o.HostAgent)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.cfg
	e := ibmad.NewEngine(opened.Transport, ibmad.Options{MaxOutstanding: c.MADWindow, MaxPerTarget: c.MADPerTarget,
		RTTObserver: s.observe, Log: s.warn})
	port, err := e.Port()
	if err != nil {
		e.Close()
		opened.Close()
		return nil, fmt.Errorf("reading the local port: %w", err)
	}
	d := &device{opened: opened, engine: e, since: time.Now(), stop: func() {}}
	if d.agent, err = s.startAgent(e, c); err != nil {
		e.Close()
		opened.Close()
		return nil, err
	}
	s.exp.SetSeed(port.PortGUID.String())
	level.Info(s.logger).Log("msg", "device open", "ca", port.CA, "port", port.PortNum, "lid", port.LID,
		"port_guid", port.PortGUID, "agent", d.agent != nil)
	s.dev, s.devErr = d, nil
	s.install()
	if s.o.SimFaults && opened.Fabric != nil {
		ctx, cancel := context.WithCancel(context.Background())
		d.stop = cancel
		go opened.Fabric.Chaos(ctx, sim.ChaosOptions{
			Rand:   rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7)),
			Source: opened.Node, // faults on the routes this node traces
			Log:    func(msg string, kv ...any) { level.Info(s.logger).Log(append([]any{"msg", msg}, kv...)...) },
		})
	}
	return d, nil
}

// startAgent starts the hosted agent c asks for on e, or returns nil.
func (s *Service) startAgent(e *ibmad.Engine, c *config.Config) (*agent.Agent, error) {
	if !s.o.HostAgent || !*c.Agent.Enabled {
		return nil, nil
	}
	return agent.New(e, agent.Config{OUI: ibmad.OUI(c.OUI), RatePerSource: c.Agent.RatePerSource, Burst: c.Agent.Burst,
		Ping: *c.Agent.Ping, Hostname: c.Agent.Hostname, Log: s.warn})
}

// warn logs what the engine and the hosted agent drop (their Log).
func (s *Service) warn(msg string, keyvals ...any) {
	level.Warn(s.logger).Log(append([]any{"msg", msg}, keyvals...)...)
}

// closeDevice closes the current device; s.mu is held.
func (s *Service) closeDevice() {
	d := s.dev
	if d == nil {
		return
	}
	s.dev = nil
	d.stop()
	if d.agent != nil {
		d.agent.Close()
	}
	d.engine.Close()
	d.opened.Close()
}

// restartKeys are the keys a reload may not change (see the package doc).
func restartKeys(old, c *config.Config) error {
	switch {
	case old.MADWindow != c.MADWindow:
		return fmt.Errorf("mad_window needs a restart (running %d, file %d)", old.MADWindow, c.MADWindow)
	case old.MADPerTarget != c.MADPerTarget:
		return fmt.Errorf("mad_window_per_target needs a restart (running %d, file %d)", old.MADPerTarget, c.MADPerTarget)
	}
	return nil
}

// agentChanged reports whether the hosted agent must be replaced.
func agentChanged(old, c *config.Config) bool {
	return old.OUI != c.OUI || !reflect.DeepEqual(old.Agent, c.Agent)
}

// Reload reads the configuration file again and applies it by the rules
// of the package doc; on error the running configuration stays and
// config_last_reload_successful is 0.
func (s *Service) Reload() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := config.Load(s.o.ConfigFile)
	if err == nil {
		err = restartKeys(s.cfg, c)
	}
	if err == nil && s.dev != nil && agentChanged(s.cfg, c) {
		err = s.replaceAgent(c)
	}
	if err != nil {
		s.reloadOK.Set(0)
		level.Error(s.logger).Log("msg", "configuration reload failed; keeping the old configuration", "err", err)
		return err
	}
	s.cfg = c
	s.install()
	s.reloadOK.Set(1)
	s.reloadTime.SetToCurrentTime()
	level.Info(s.logger).Log("msg", "configuration reloaded", "file", s.o.ConfigFile, "destinations", len(c.Destinations))
	return nil
}

// replaceAgent stops the hosted agent and starts the one c asks for on the
// same engine; if that fails, the old one is started again.
func (s *Service) replaceAgent(c *config.Config) error {
	d := s.dev
	if d.agent != nil {
		d.agent.Close()
	}
	ag, err := s.startAgent(d.engine, c)
	if err != nil {
		d.agent, _ = s.startAgent(d.engine, s.cfg)
		return fmt.Errorf("hosted agent: %w", err)
	}
	d.agent = ag // Reload installs it with c
	return nil
}

// ReloadHandler serves /-/reload: POST (or PUT) reloads the configuration
// file, as SIGHUP does.
func (s *Service) ReloadHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost && r.Method != http.MethodPut {
			w.Header().Set("Allow", "POST")
			http.Error(w, "use POST to reload the configuration", http.StatusMethodNotAllowed)
			return
		}
		if err := s.Reload(); err != nil {
			http.Error(w, "reload failed: "+err.Error(), http.StatusInternalServerError)
			return
		}
		fmt.Fprintln(w, "reloaded")
	})
}
