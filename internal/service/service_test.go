package service

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/internal/ibopen"
)

func writeConfig(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runService registers s's collectors with a new registry and runs s
// until the test ends; it returns the registry.
func runService(t *testing.T, s *Service) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(s.Collectors()...)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return reg
}

// simService runs a Service on node self of a simulated fabric.
func simService(t *testing.T, f *sim.Fabric, self, cfgBody string) (*Service, string, *prometheus.Registry) {
	t.Helper()
	cfgFile := filepath.Join(t.TempDir(), "ibtracer.yml")
	writeConfig(t, cfgFile, cfgBody)
	s, err := New(Options{ConfigFile: cfgFile, HostAgent: true, RetryInterval: 100 * time.Millisecond,
		Open: func(bool) (*ibopen.Opened, error) {
			tr, err := f.Attach(self, 0)
			if err != nil {
				return nil, err
			}
			return &ibopen.Opened{Transport: tr, Fabric: f, Node: self}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	reg := runService(t, s)
	waitFor(t, 10*time.Second, "the device to open", func() bool { return s.Engine() != nil })
	return s, cfgFile, reg
}

// hostedAgent is a Service on the demo fabric's first CA, hosting the
// agent, and an engine on its second CA to ask that agent.
type hostedAgent struct {
	s       *Service
	cfgFile string
	reg     *prometheus.Registry
	lid     uint16 // the hosted agent's
	asker   *ibmad.Engine
}

// startHostedAgent starts a hostedAgent whose service reads cfgBody.
func startHostedAgent(t *testing.T, cfgBody string) *hostedAgent {
	t.Helper()
	f, err := sim.New(ibopen.DemoTopology(), sim.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var cas []string
	for _, n := range f.Nodes() {
		if n.Type == ibmad.NodeTypeCA {
			cas = append(cas, n.Name)
		}
	}
	h := &hostedAgent{}
	h.s, h.cfgFile, h.reg = simService(t, f, cas[0], cfgBody)
	h.lid, _ = f.LIDOf(cas[0], 1)
	tr, err := f.Attach(cas[1], 0)
	if err != nil {
		t.Fatal(err)
	}
	h.asker = ibmad.NewEngine(tr, ibmad.Options{})
	t.Cleanup(func() { h.asker.Close() })
	return h
}

func waitFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// askAgent sends the hosted agent a vendor ClassPortInfo Get with oui from
// another node's engine and returns the answer's status, or an error.
func askAgent(e *ibmad.Engine, lid uint16, oui ibmad.OUI) (ibmad.Status, error) {
	v := ibmad.NewVendorGet(ibmad.ClassIBTracer, oui, ibmad.AttrClassPortInfo, 0)
	req := &ibmad.Request{Addr: ibmad.GSIAddress(lid, 0), Timeout: 300 * time.Millisecond, Retries: 1}
	_ = v.MarshalTo(req.MAD[:])
	var resp ibmad.Response
	if err := e.Do(context.Background(), req, &resp); err != nil {
		return 0, err
	}
	return resp.MAD.Status(), nil
}

// TestReloadOUIReachesTheHostedAgent: after an oui reload the tracer asks
// agents with the new OUI, so the hosted agent must answer it too (or the
// reload must be refused).
func TestReloadOUIReachesTheHostedAgent(t *testing.T) {
	h := startHostedAgent(t, "oui: 0x001405\n")
	s, cfgFile, selfLID, asker := h.s, h.cfgFile, h.lid, h.asker
	if st, err := askAgent(asker, selfLID, 0x001405); err != nil || st != ibmad.StatusOK {
		t.Fatalf("before the reload: status %v, %v", st, err)
	}
	writeConfig(t, cfgFile, "oui: 0x00abcd\n")
	if err := s.Reload(); err != nil {
		if !strings.Contains(err.Error(), "oui needs a restart") {
			t.Fatalf("reload refused without saying why: %v", err)
		}
		return
	}
	if st, err := askAgent(asker, selfLID, 0x00abcd); err != nil || st != ibmad.StatusOK {
		t.Fatalf("after reloading oui 0x00abcd the tracer asks with it, but the hosted agent answers: status %v, %v", st, err)
	}
}

// TestReloadRules: a key fixed at open is refused with its name and the
// running configuration kept; the hosted agent follows agent.enabled.
func TestReloadRules(t *testing.T) {
	h := startHostedAgent(t, "mad_window: 64\n")
	s, cfgFile, reg, selfLID, asker := h.s, h.cfgFile, h.reg, h.lid, h.asker

	writeConfig(t, cfgFile, "mad_window: 128\nagent:\n  enabled: false\n")
	if err := s.Reload(); err == nil || !strings.Contains(err.Error(), "mad_window needs a restart") {
		t.Fatalf("mad_window change: %v", err)
	}
	if v := metric(t, reg, "ibtracer_config_last_reload_successful", nil); v != 0 {
		t.Fatalf("config_last_reload_successful %v after a refused reload", v)
	}
	if st, err := askAgent(asker, selfLID, ibmad.OUIOpenIB); err != nil || st != ibmad.StatusOK {
		t.Fatalf("the refused file (agent disabled) was applied: status %v, %v", st, err)
	}

	writeConfig(t, cfgFile, "mad_window: 64\nagent:\n  enabled: false\n")
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, err := askAgent(asker, selfLID, ibmad.OUIOpenIB); err == nil {
		t.Fatal("the hosted agent still answers after agent.enabled: false")
	}
	writeConfig(t, cfgFile, "mad_window: 64\nagent:\n  enabled: true\n  hostname: again\n")
	if err := s.Reload(); err != nil {
		t.Fatalf("enabling the agent again: %v", err)
	}
	if st, err := askAgent(asker, selfLID, ibmad.OUIOpenIB); err != nil || st != ibmad.StatusOK {
		t.Fatalf("after agent.enabled: true: status %v, %v", st, err)
	}
	if v := metric(t, reg, "ibtracer_config_last_reload_successful", nil); v != 1 {
		t.Fatalf("config_last_reload_successful %v", v)
	}
}

// metric returns the value of the series of family name whose labels
// include want, or -1.
func metric(t *testing.T, reg *prometheus.Registry, name string, want map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for k, v := range want {
				if !hasLabel(m, k, v) {
					continue next
				}
			}
			switch {
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			case m.Counter != nil:
				return m.Counter.GetValue()
			}
		}
	}
	return -1
}

func hasLabel(m *dto.Metric, k, v string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == k && l.GetValue() == v {
			return true
		}
	}
	return false
}
