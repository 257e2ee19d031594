package collector

import (
	"bufio"
	"encoding/json"
	"fmt"
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
		out = append(out, s.view())
	}
	return out
}

func (s *destState) view() TraceView {
	s.mu.Lock()
	defer s.mu.Unlock()
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
	return v
}

// TracesInFlight is how many /traces requests are served at once; more
// get 503 at once.
const TracesInFlight = 2

// TracesHandler serves /traces: the latest trace per destination, with
// per-hop data and timestamps, as JSON (an array, one destination at a
// time, so that a request holds one destination's view, not all of them).
func (e *Exporter) TracesHandler() http.Handler {
	return limitInFlight(TracesInFlight, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		bw := bufio.NewWriterSize(w, 32<<10)
		_, _ = bw.WriteString("[")
		for i, s := range e.destinations() {
			b, err := json.MarshalIndent(s.view(), "  ", "  ")
			if err != nil {
				continue
			}
			if i > 0 {
				_, _ = bw.WriteString(",")
			}
			_, _ = bw.WriteString("\n  ")
			_, _ = bw.Write(b)
		}
		_, _ = bw.WriteString("\n]\n")
		_ = bw.Flush()
	}))
}

// limitInFlight serves at most n requests at once; more get 503 at once
// (the client retries; nothing queues).
func limitInFlight(n int, h http.Handler) http.Handler {
	sem := make(chan struct{}, n)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case sem <- struct{}{}:
			defer func() { <-sem }()
			h.ServeHTTP(w, r)
		default:
			http.Error(w, fmt.Sprintf("too many concurrent requests (at most %d); retry", n), http.StatusServiceUnavailable)
		}
	})
}
