package collector

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// NewMADRTT returns the engine's RTT histogram (by class) and the observer
// to give ibmad.Options.RTTObserver.
func NewMADRTT() (*prometheus.HistogramVec, func(ibmad.MgmtClass, time.Duration)) {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Name: "mad_rtt_seconds", Help: "Round-trip time of answered MADs, by management class.",
		Buckets: latencyBuckets, NativeHistogramBucketFactor: 1.1, NativeHistogramMaxBucketNumber: 100,
		NativeHistogramMinResetDuration: time.Hour,
	}, []string{"class"})
	return h, func(c ibmad.MgmtClass, d time.Duration) { h.WithLabelValues(c.String()).Observe(d.Seconds()) }
}

// TraceView is one destination in /traces.
type TraceView struct {
	Name            string            `json:"name"`
	Address         string            `json:"address"`
	Labels          map[string]string `json:"labels,omitempty"`
	IntervalSeconds float64           `json:"interval_seconds"`
	PathChanges     uint64            `json:"path_changes"`
	LastChange      *time.Time        `json:"last_change,omitempty"`
	Last            *trace.JSONResult `json:"last_trace"`
}

// Traces returns the latest trace of every destination.
func (e *Exporter) Traces() []TraceView {
	var out []TraceView
	for _, s := range e.destinations() {
		s.mu.Lock()
		v := TraceView{Name: s.cfg.Name, Address: s.target.Address(), Labels: s.cfg.Labels,
			IntervalSeconds: durationSeconds(s.cfg.Interval), PathChanges: s.pathChanges}
		if !s.lastChange.IsZero() {
			t := s.lastChange.UTC()
			v.LastChange = &t
		}
		if s.last != nil {
			j := s.last.JSON()
			v.Last = &j
		}
		s.mu.Unlock()
		out = append(out, v)
	}
	return out
}

// TracesHandler serves /traces: the latest trace per destination, with
// per-hop data and timestamps, as JSON.
func (e *Exporter) TracesHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(e.Traces())
	})
}
