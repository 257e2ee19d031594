package collector

import (
	"bufio"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
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
	// Traces is how many traces of the destination were recorded since it
	// was configured (every result; /metrics counts them for all
	// destinations together, docs/metrics.md).
	Traces      uint64            `json:"traces"`
	PathChanges uint64            `json:"path_changes"`
	LastChange  *time.Time        `json:"last_change,omitempty"`
	Last        *trace.JSONResult `json:"last_trace"`
	// PreviousPath is the last trace of the path before the latest change
	// (absent until the path changes), PreviousPathUntil when the change
	// was seen.
	PreviousPath      *trace.JSONResult `json:"previous_path,omitempty"`
	PreviousPathUntil *time.Time        `json:"previous_path_until,omitempty"`
	// Congestion is the last path's most congested link (health:;
	// health_congestion.go).
	Congestion *PathCongestion `json:"congestion,omitempty"`
	// PathHealth is the last path's health, link by link (health:;
	// pagehealth.go).
	PathHealth *PathHealthView `json:"path_health,omitempty"`
	// LastGoodPath is, while the latest trace fails (it stopped short,
	// or a hop mismatched), the last trace that succeeded.
	LastGoodPath *trace.JSONResult `json:"last_good_path,omitempty"`
}

// Traces returns the latest trace of every destination.
func (e *Exporter) Traces() []TraceView { return e.pages().views() }

func (p pages) views() []TraceView {
	var out []TraceView
	for _, s := range p.dests.sorted() {
		out = append(out, s.view())
	}
	return out
}

func (s *destState) view() TraceView {
	prev, until := s.previous()
	var good *trace.Result
	if last := s.lastResult(); last != nil && !last.Status.Succeeded() {
		good = s.lastGood()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	addr, _ := s.infoAddress() // multicast.go
	v := TraceView{Name: s.cfg.Name, Address: addr, Labels: s.cfg.Labels,
		IntervalSeconds: durationSeconds(s.cfg.Interval), Traces: s.traces, PathChanges: s.pathChanges}
	if !s.lastChange.IsZero() {
		t := s.lastChange.UTC()
		v.LastChange = &t
	}
	if s.last != nil {
		j := s.last.JSON()
		v.Last = &j
	}
	if prev != nil {
		j, t := prev.JSON(), until.UTC()
		v.PreviousPath, v.PreviousPathUntil = &j, &t
	}
	v.Congestion = pathCongestion(s.health)
	v.PathHealth = pathHealthView(s.health)
	if v.PathHealth != nil && s.last != nil && !reached(s.last) {
		v.PathHealth.Partial = true
	}
	if good != nil {
		j := good.JSON()
		v.LastGoodPath = &j
	}
	return v
}

// lastResult is the destination's latest trace (nil: never traced).
func (s *destState) lastResult() *trace.Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// TracesInFlight is how many /traces requests render at once; more get
// 503 at once. A request waiting on its client holds no slot
// (limitInFlight).
const TracesInFlight = 2

// TracesHandler serves /traces: the latest trace per destination (all,
// or those named by ?destination=NAME, repeatable: the union; of those,
// with ?link=GUID:PORT, the ones whose path crosses that link; 400 for a
// query that does not parse or an unknown parameter), with per-hop data,
// timestamps and the previous path, one destination at a time, so that a
// request holds one destination's view, not all of them. JSON (an array)
// by default; HTML, the path drawn hop by hop, for a client that prefers
// text/html (a browser) or asks ?format=html.
func (e *Exporter) TracesHandler() http.Handler { return e.pages().traces() }

func (p pages) traces() http.Handler {
	return limitInFlight(TracesInFlight, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		query, err := parseTracesQuery(r.URL.RawQuery)
		if err != nil {
			http.Error(w, "/traces: "+err.Error(), http.StatusBadRequest)
			return
		}
		dests := p.dests.sorted()
		all := len(dests)
		index := &nodeIndex{p: p, dests: dests} // names: tracesnames.go
		var link *trace.LinkPort
		if query.link != nil {
			l, err := resolveLink(*query.link, index)
			if err != nil {
				http.Error(w, fmt.Sprintf("/traces: link %q: %v", short(query.link.String()), err), nameStatus(err))
				return
			}
			link = &l
		}
		if len(query.names) > 0 {
			var code int
			if dests, code, err = pick(dests, query.names, index); err != nil {
				http.Error(w, "/traces: "+err.Error(), code)
				return
			}
		}
		views := func(f func(TraceView)) {
			for _, s := range dests {
				if link == nil || s.crosses(*link) {
					f(s.view())
				}
			}
		}
		w.Header().Set("Vary", "Accept")
		bw := bufio.NewWriterSize(w, 32<<10)
		defer func() { _ = bw.Flush() }()
		if wantsHTML(r.Header.Get("Accept"), query.format) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			q := "" // the JSON link keeps the filter
			head := tracesHeadData{}
			for _, s := range dests {
				if len(dests) < all {
					q += "&destination=" + url.QueryEscape(s.cfg.Name)
					head.Destinations = append(head.Destinations, s.cfg.Name)
				}
			}
			if query.link != nil {
				q += "&link=" + url.QueryEscape(query.link.String())
				head.Link = "{" + link.NodeGUID.String() + "}"
				if n, ok := index.get().Node(link.NodeGUID); ok {
					head.Link = n.Label()
				}
				head.Link += ":" + strconv.Itoa(int(link.Port))
			}
			head.JSON = template.URL("?format=json" + q) // every value in q is url.QueryEscape'd
			writeTracesHTML(bw, head, link, views)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = bw.WriteString("[")
		i := 0
		views(func(v TraceView) {
			b, err := json.MarshalIndent(v, "  ", "  ")
			if err != nil {
				return
			}
			if i > 0 {
				_, _ = bw.WriteString(",")
			}
			i++
			_, _ = bw.WriteString("\n  ")
			_, _ = bw.Write(b)
		})
		_, _ = bw.WriteString("\n]\n")
	}))
}
