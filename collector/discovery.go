package collector

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibtracer/ibtracer_exporter/trace"
)

// discoveryStats count how traces learnt their paths (the discovery key:
// smp, sa or auto; docs/architecture.md, "SA-only discovery") and the SA
// record requests SA-mode walks sent. They live in the Exporter, so that
// a reload (which builds a new tracer) does not reset them.
type discoveryStats struct {
	mu         sync.Mutex
	traces     [2]uint64 // by trace.Discovery: smp, sa
	saRequests uint64
}

var discoveryModes = []trace.Discovery{trace.DiscoverySMP, trace.DiscoverySA}

func (d *discoveryStats) add(r *trace.Result) {
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

// collectDiscovery emits the discovery series; tr is the current tracer
// (nil: no device).
func (e *Exporter) collectDiscovery(ch chan<- prometheus.Metric, tr *trace.Tracer) {
	mode := trace.Discovery("")
	if tr != nil {
		mode = tr.Mode()
	}
	d := &e.disc
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
