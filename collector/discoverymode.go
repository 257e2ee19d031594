package collector

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibtracer/ibtracer_exporter/trace"
)

// The discovery mode (the configuration's discovery: smp, sa or auto;
// docs/architecture.md, "SA-only discovery"): how traces learn their
// paths. Not the discover: selectors, which pick destinations (fleet.go).

// modeStats count how traces learnt their paths and the SA record
// requests SA-mode walks sent. They live in the Exporter, so that a
// reload (which builds a new tracer) does not reset them.
type modeStats struct {
	mu         sync.Mutex // guards traces and saRequests
	traces     [2]uint64  // by trace.Discovery: smp, sa
	saRequests uint64
}

var discoveryModes = []trace.Discovery{trace.DiscoverySMP, trace.DiscoverySA}

func (d *modeStats) add(r *trace.Result) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.saRequests += uint64(r.SARequests)
	for i, m := range discoveryModes {
		if r.Discovery == m {
			d.traces[i]++
		}
	}
}

var (
	dDiscoveryMode = desc("discovery_mode", "1 for how the next trace learns its path: smp (directed-route SMPs) or sa "+
		"(SA records only; with discovery: auto, after SMPs were refused at the first hop).", "mode")
	dDiscoveryTraces = desc("discovery_traces_total", "Traces by how they learnt the path: smp or sa.", "mode")
	dSARequests      = desc("sa_record_requests_total", "SA record requests (NodeRecord, LinkRecord, PortInfoRecord, "+
		"LinearForwardingTableRecord) that SA-mode walks sent; records are shared across destinations for share_validation, so "+
		"its rate is the SA load the tracing adds.")
)

// collect emits the discovery mode's series; tr is the current tracer
// (nil: no device).
func (d *modeStats) collect(ch chan<- prometheus.Metric, tr *trace.Tracer) {
	mode := trace.Discovery("")
	if tr != nil {
		mode = tr.Mode()
	}
	d.mu.Lock()
	traces, reqs := d.traces, d.saRequests
	d.mu.Unlock()
	for i, m := range discoveryModes {
		v := 0.0
		if m == mode {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(dDiscoveryMode, prometheus.GaugeValue, v, string(m))
		ch <- prometheus.MustNewConstMetric(dDiscoveryTraces, prometheus.CounterValue, float64(traces[i]), string(m))
	}
	ch <- prometheus.MustNewConstMetric(dSARequests, prometheus.CounterValue, float64(reqs))
}
