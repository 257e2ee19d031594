package collector

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ibtracer/ibtracer_exporter/agent"
	"github.com/ibtracer/ibtracer_exporter/collector/config"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/internal/fabricstr"
	"github.com/ibtracer/ibtracer_exporter/internal/nodenamemap"
	"github.com/ibtracer/ibtracer_exporter/plan"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// The bounded label values of traces_total (every result from the first
// scrape) and trace_failures_total (a destination's series of a reason
// appears once it occurred; docs/metrics.md).
var (
	allResults = [...]trace.Status{trace.StatusOK, trace.StatusMismatch, trace.StatusUnreachable, trace.StatusTooLong,
		trace.StatusResolve, trace.StatusLeftSubnet} // device errors are skipped traces, not results (ibtracer_traces_skipped_total)
	allReasons = [...]trace.Reason{trace.ReasonNoRoute, trace.ReasonPortDown, trace.ReasonTimeout, trace.ReasonLoop,
		trace.ReasonTooLong, trace.ReasonSA, trace.ReasonMismatch, trace.ReasonBadConfig, trace.ReasonWrongPort, trace.ReasonRouter}
	// Their label pairs, shared by every destination's label sets.
	reasonPairs = outcomePairs("reason", allReasons[:])
	madClasses  = []ibmad.MgmtClass{ibmad.ClassSubnDR, ibmad.ClassSubnLID, ibmad.ClassSubnAdm, ibmad.ClassIBTracer}
	dropReasons = ibmad.DropReasons()
)

// dLocalPort is the exporter's own port: the alerts join it to up (a
// node whose exporter cannot be scraped) and to the destinations' last
// ports (docs/metrics.md, "Alerts in a fleet").
var dLocalPort = desc("local_port_info", "The exporter's own port: its node GUID, port GUID and name (node-name map, else node description).",
	"node_guid", "port_guid", "node_name")

// nodeName is a node's name in the series that name nodes: the
// node-name map's name, else its node description.
func nodeName(mapped, nodeDesc string) string {
	if mapped != "" {
		return mapped
	}
	return nodeDesc
}

// destLabel names a destination in its series. Short because it is in
// every per-destination series: "destination" was a tenth of /metrics at
// 10,000 destinations (docs/metrics.md, "Series budget").
const destLabel = "dest"

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(namespace, "", name), help, labels, nil)
}

// Describe sends nothing: the label names of the per-destination series
// follow the configuration (its custom labels), so this is an unchecked
// collector.
func (e *Exporter) Describe(chan<- *prometheus.Desc) {}

// Collect emits every series.
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	rt := e.st.load()
	engine, ag, devErr, tr, on := rt.Engine, rt.Agent, rt.DeviceErr, rt.tracer, rt.checker != nil
	interval := time.Duration(config.DefaultInterval)
	var nodeNames nodenamemap.Map
	var cabling *plan.Plan
	if rt.Config != nil {
		interval = time.Duration(rt.Config.Interval)
		nodeNames, cabling = rt.Config.NodeNames, rt.Config.Plan
	}

	up := 0.0
	if engine != nil && devErr == nil {
		up = 1
	}
	ch <- prometheus.MustNewConstMetric(desc("device_up", "1 when the InfiniBand device (or simulator) is open."), prometheus.GaugeValue, up)
	if engine != nil {
		if p, ok := engine.CachedPort(); ok && p.PortGUID != 0 {
			ch <- prometheus.MustNewConstMetric(dLocalPort, prometheus.GaugeValue, 1, p.NodeGUID.String(), p.PortGUID.String(),
				fabricstr.String(nodeName(nodeNames.Name(uint64(p.NodeGUID)), p.NodeDesc)))
		}
	}
	if up == 0 {
		ch <- prometheus.MustNewConstMetric(dDeviceDown, prometheus.GaugeValue, 1, deviceDownReason(devErr)) // device_metrics.go
	}
	for i, r := range skipReasons {
		ch <- prometheus.MustNewConstMetric(dSkipped, prometheus.CounterValue, float64(e.skips[i].Load()), r)
	}
	names, dests := e.dests.scrape()
	ch <- prometheus.MustNewConstMetric(desc("destinations", "Configured destinations."), prometheus.GaugeValue, float64(len(dests)))
	ch <- prometheus.MustNewConstMetric(dIntervalAll, prometheus.GaugeValue, interval.Seconds())
	collectDestinations(ch, names, dests, interval)
	e.fleet.Collect(ch)
	e.modes.collect(ch, tr)
	var ber map[string]config.BERTargets
	if rt.Config != nil && rt.Config.Health.Options.Counters {
		ber = rt.Config.Health.BER
	}
	unhealthy := collectHealth(ch, on, &e.health, &e.ctrs, names, dests, ber)
	left := collectLeftDown(ch, dests, e.leftForgot.Load())                                             // leftdown.go
	collectLinkInfo(ch, dests, unhealthy, e.evidence.collect(ch, e.logger, rt, dests), left, nodeNames) // evidence.go, linkinfo.go
	collectPlan(ch, cabling, dests, nodeNames)                                                          // plan.go
	h := e.dests.hists
	h.duration.Collect(ch)
	h.latency.Collect(ch)
	h.traces.Collect(ch)
	if engine != nil {
		collectEngine(ch, engine.Stats())
		collectBudget(ch, engine.BudgetStats())
	}
	if ag != nil {
		collectAgent(ch, ag.Stats())
	}
}

// Per-destination series: a bounded set for every destination (see
// docs/metrics.md, "Series budget"), and the path detail and per-hop
// series only for destinations with hops: true.
//
// A destination's interval is a series of its own only when it is not the
// configuration's interval (ibtracer_interval_seconds): 10,000 copies of
// the same number were a tenth of /metrics (docs/metrics.md, "Series
// budget").
func collectDestinations(ch chan<- prometheus.Metric, names []string, dests []*destState, interval time.Duration) {
	lab := func(extra ...string) []string { return append(append([]string{}, names...), extra...) }
	var (
		dInterval = desc("destination_interval_seconds", "Trace interval of the destination, when not the configuration's "+
			"(ibtracer_interval_seconds).", lab()...)
		dInfo     = desc("destination_info", "The destination's address and the ibtracer arguments that trace it by hand.", lab("address", "ibtracer_args")...)
		dLastPort = desc("destination_last_port_info", "The port the destination was last reached at, by node GUID, port GUID and name "+
			"(node-name map, else node description); only while the last trace did not reach it.", lab("node_guid", "port_guid", "node_name")...)
		dSuccess  = desc("trace_success", "1 if the last trace reached the destination and found no port mismatch.", lab()...)
		dLastTime = desc("last_trace_timestamp_seconds", "When the last trace ended (0: none yet).", lab()...)
		dLastDur  = desc("last_trace_duration_seconds", "How long the last trace took (0: none yet).", lab()...)
		dLastLat  = desc("last_latency_seconds", "Round-trip time of the validation MAD to the destination's own agent (never its SMA), "+
			"from the last trace that measured it (0: none yet).", lab()...)
		dFailures = desc("trace_failures_total", "Failed traces by reason (a reason appears once it occurred).", lab("reason")...)
		dHops     = desc("path_hops", "Links the last traced path crosses: the nodes after the source, destination included.", lab()...)
		dChanges  = desc("path_changes_total", helpChanges, lab()...)
		dReturns  = desc("path_returns_total", helpReturns, lab()...)
		dMisHops  = desc("path_mismatched_hops", "Hops of the last trace that reported a port mismatch (status 7).", lab()...)
		dDiverged = desc("path_diverging_switch_info", "The switch whose forwarding diverged from its table, named by a port "+
			"mismatch of the last trace (on its path, or over another link: mismatch_other_link), and the hop where it was seen: one series per mismatched hop that names one.",
			lab("switch_guid", "switch_name", "seen_at_hop", "seen_at")...)
		dUnsHops = desc("path_unsupported_hops", "Hops of the last trace nobody validated: unsupported (no agent, the SMA not asked) or lost (no answer).", lab()...)
		// hops: true only.
		dChangeTime = desc("path_last_change_timestamp_seconds", "When the path last changed (0: never).", lab()...)
		dMisTotal   = desc("port_mismatches_total", "Hops that reported a port mismatch (status 7), summed over traces.", lab()...)
		dUnsTotal   = desc("unsupported_hops_total", "Hops nobody validated (unsupported or lost), summed over traces.", lab()...)
		dValHops    = desc("path_validated_hops", "Hops of the last trace whose ingress port was confirmed over the traced path's link into them, by the agent or the SMA.", lab()...)
		dCoverage   = desc("path_coverage_ratio", "Share of the last trace's links that a validation MAD crossed last and confirmed (0..1).", lab()...)
		dMADs       = desc("trace_mads_total", "MADs spent tracing the destination.", lab()...)
		dLastMADs   = desc("last_trace_mads", "MADs the last trace spent.", lab()...)
		dHopInfo    = desc("hop_info", helpHopInfo,
			lab("hop", "node_guid", "port_guid", "node_desc", "node_type", "lid", "in_port", "out_port")...)
		dHopStatus = desc("hop_verdict", helpHopStatus, lab("hop", "verdict", "validated_by")...)
		dHopRTT    = desc("hop_rtt_seconds", helpHopRTT, lab("hop", "validated_by")...)
		pd         = newPathDescs(lab) // paths.go
	)
	for _, s := range dests {
		s.mu.Lock()
		// One allocation per destination for its fixed-label samples.
		samples := make([]sample, 0, 20+len(allReasons))
		emit := func(d *prometheus.Desc, l labelSet, typ prometheus.ValueType, val float64) {
			samples = append(samples, sample{desc: d, labels: l, typ: typ, val: val})
			ch <- &samples[len(samples)-1]
		}
		g := func(d *prometheus.Desc, val float64) { emit(d, s.base, prometheus.GaugeValue, val) }
		c := func(d *prometheus.Desc, val float64) { emit(d, s.base, prometheus.CounterValue, val) }
		if time.Duration(s.cfg.Interval) != interval {
			g(dInterval, durationSeconds(s.cfg.Interval))
		}
		emit(dInfo, s.info, prometheus.GaugeValue, 1)
		r := s.last
		success, hops, mis, uns, val, cover, lastMADs, lastTime := 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
		if r != nil {
			if r.Status.Succeeded() {
				success = 1
			}
			hops = float64(r.PathHops())
			mis, uns, val = float64(r.Count(trace.AgentMismatch)), float64(unsupported(r)), float64(r.Count(trace.AgentValidated))
			cover = r.Coverage().Ratio()
			lastMADs = float64(r.MADs)
			lastTime = float64(s.lastTime.UnixMilli()) / 1e3 // ms: shorter text, 10,000 times a scrape
		}
		g(dSuccess, success)
		if p := s.lastPort; p != nil && (r == nil || !(r.Status == trace.StatusOK || r.Status == trace.StatusMismatch)) {
			emit(dLastPort, s.base.with(pair("node_guid", p.NodeGUID.String()), pair("port_guid", p.PortGUID.String()),
				pair("node_name", fabricstr.String(nodeName(p.NodeName, p.NodeDesc)))), prometheus.GaugeValue, 1)
		}
		g(dLastTime, lastTime)
		g(dLastDur, float64(s.lastDuration.Microseconds())/1e6)
		g(dLastLat, float64(s.lastLatency.Nanoseconds()/100)/1e7) // 0.1 µs
		if s.failures != nil {
			for j, n := range s.failures {
				if n > 0 {
					emit(dFailures, s.base.with(reasonPairs[j]), prometheus.CounterValue, float64(n))
				}
			}
		}
		g(dHops, hops)
		if s.cfg.AllPaths() {
			s.collectOffsetChangesLocked(ch, pd.changes)
		} else {
			c(dChanges, float64(s.pathChanges))
		}
		s.collectReturnsLocked(ch, dReturns, pd.returns)
		g(dMisHops, mis)
		for _, h := range s.divergedLocked() {
			emit(dDiverged, s.base.with(pair("switch_guid", h.Diverged.Switch.String()), pair("switch_name", h.Diverged.SwitchName),
				pair("seen_at_hop", strconv.Itoa(h.Hop)), pair("seen_at", nodeName(h.NodeName, h.NodeDesc))), prometheus.GaugeValue, 1)
		}
		g(dUnsHops, uns)
		if s.hops || s.cfg.AllPaths() {
			g(pd.distinct, s.distinctLocked())
		}
		if !s.hops {
			s.mu.Unlock()
			continue
		}
		changeTime := 0.0
		if !s.lastChange.IsZero() {
			changeTime = float64(s.lastChange.UnixNano()) / 1e9
		}
		g(dChangeTime, changeTime)
		c(dMisTotal, float64(s.mismatched))
		c(dUnsTotal, float64(s.unsupported))
		g(dValHops, val)
		g(dCoverage, cover)
		c(dMADs, float64(s.mads))
		g(dLastMADs, lastMADs)
		hd := hopFamilies{dHopInfo, dHopStatus, dHopRTT}
		if s.cfg.AllPaths() {
			hd = hopFamilies{pd.hopInfo, pd.hopStatus, pd.hopRTT}
		}
		collectHops(ch, hd, s)
		s.mu.Unlock()
	}
}

// hopFamilies are the per-hop families: hop_info, hop_verdict and
// hop_rtt_seconds.
type hopFamilies [3]*prometheus.Desc

// collectHops sends the per-hop series of s's last trace, or of every
// path of its last set that reached the destination, each labelled with
// its LID offset. Their label sets are built when the series is written
// (hopSample), not kept: at 10,000 destinations they were 27 MB that a
// scrape built and the exporter kept while the paths lasted, all alive
// during every scrape (docs/exporter.md, "Scrape memory"). A trace's
// result is not modified once recorded, so its hops are read later.
func collectHops(ch chan<- prometheus.Metric, d hopFamilies, s *destState) {
	type path struct {
		base labelSet
		r    *trace.Result
	}
	var paths []path
	if s.set != nil {
		for i, r := range s.set.Paths {
			if len(r.Hops) >= 2 && r.Status.Walked() {
				paths = append(paths, path{s.base.with(pair("lid_offset", strconv.Itoa(s.set.Offset(i)))), r})
			}
		}
	} else if r := s.last; r != nil && len(r.Hops) >= 2 && r.Status.Walked() {
		paths = append(paths, path{s.base, r})
	}
	for _, p := range paths {
		hs := make([]hopSample, 0, 3*(len(p.r.Hops)-1))
		for i := range p.r.Hops[1:] {
			h := &p.r.Hops[i+1]
			for kind, desc := range d {
				hs = append(hs, hopSample{desc: desc, base: p.base, hop: h, kind: uint8(kind)})
			}
		}
		for i := range hs {
			ch <- &hs[i]
		}
	}
}

// hopSample is a series of a hop (hop_info, hop_verdict or
// hop_rtt_seconds, by kind), its label set built when it is written.
type hopSample struct {
	desc *prometheus.Desc
	base labelSet
	hop  *trace.Hop
	kind uint8 // an index of hopFamilies
}

func (m *hopSample) Desc() *prometheus.Desc { return m.desc }

func (m *hopSample) Write(out *dto.Metric) error {
	h := m.hop
	hop := sharedPair("hop", strconv.Itoa(h.Hop))
	s := sample{desc: m.desc, typ: prometheus.GaugeValue, val: 1}
	switch m.kind {
	case 0:
		s.labels = m.base.with(hop, pair("node_guid", h.NodeGUID.String()), pair("port_guid", h.PortGUID.String()),
			pair("node_desc", h.NodeDesc), sharedPair("node_type", h.NodeType.String()), pair("lid", strconv.Itoa(int(h.LID))),
			sharedPair("in_port", strconv.Itoa(int(h.InPort))), sharedPair("out_port", strconv.Itoa(int(h.OutPort))))
	case 1:
		s.labels = m.base.with(hop, sharedPair("verdict", string(h.Agent)), sharedPair("validated_by", validator(h.ValidatedBy)))
	default:
		rtt, rttBy := h.RTT, validatorNone
		if h.AgentRTT > 0 {
			rtt, rttBy = h.AgentRTT, validator(h.ValidatedBy)
		}
		s.labels, s.val = m.base.with(hop, sharedPair("validated_by", rttBy)), rtt.Seconds()
	}
	return s.Write(out)
}

// outcomePairs returns the label pairs name=v of values, in their order.
func outcomePairs[T ~string](name string, values []T) []*dto.LabelPair {
	out := make([]*dto.LabelPair, len(values))
	for i, v := range values {
		out[i] = pair(name, string(v))
	}
	return out
}

func durationSeconds[T ~int64](d T) float64 { return float64(d) / 1e9 }

var (
	dIntervalAll = desc("interval_seconds", "The configuration's trace interval: every destination's that has no "+
		"ibtracer_destination_interval_seconds of its own.")
	dSkipped = desc("traces_skipped_total", "Scheduled traces not run, by reason (device_down: no InfiniBand device open; "+
		"device_error: the device failed during the trace). They count against no destination.", "reason")
	dMADRequests = desc("mad_requests_total", "MAD attempts sent by the engine, retries included, by management class.", "class")
	dMADTimeouts = desc("mad_timeouts_total", "MAD attempts that got no response, by management class.", "class")
	dMADRetries  = desc("mad_retries_total", "MAD retries, by management class.", "class")
	dMADSendErr  = desc("mad_send_errors_total", "MADs the transport failed to send, by management class.", "class")
	dMADOut      = desc("mad_outstanding", "MADs in flight.")
	dMADDropped  = desc("mad_dropped_total", "Received MADs the engine dropped, by reason.", "reason")
	dMADRecvErr  = desc("mad_receive_errors_total", "Receive errors of the transport (each one marks the device lost).")
	dMADResp     = desc("mad_responses_sent_total", "Responses the hosted agent sent.")
	dAgentReq    = desc("agent_requests_total", "Requests the hosted vendor agent served, by attribute and result.", "attribute", "result")
	dAgentDrop   = desc("agent_dropped_total", "Requests the hosted vendor agent dropped, by reason.", "reason")
	dAgentPings  = desc("agent_pings_total", "ibping requests the hosted agent answered.")
)

func collectEngine(ch chan<- prometheus.Metric, st ibmad.Stats) {
	byClass := map[ibmad.MgmtClass]ibmad.ClassStats{}
	for _, c := range st.Classes {
		byClass[c.Class] = c
	}
	classes := append([]ibmad.MgmtClass(nil), madClasses...)
	for _, c := range st.Classes { // any other class that saw traffic
		known := false
		for _, k := range madClasses {
			known = known || k == c.Class
		}
		if !known {
			classes = append(classes, c.Class)
		}
	}
	for _, cl := range classes {
		c := byClass[cl]
		n := cl.String()
		ch <- prometheus.MustNewConstMetric(dMADRequests, prometheus.CounterValue, float64(c.Requests), n)
		ch <- prometheus.MustNewConstMetric(dMADTimeouts, prometheus.CounterValue, float64(c.Timeouts), n)
		ch <- prometheus.MustNewConstMetric(dMADRetries, prometheus.CounterValue, float64(c.Retries), n)
		ch <- prometheus.MustNewConstMetric(dMADSendErr, prometheus.CounterValue, float64(c.SendErrors), n)
	}
	ch <- prometheus.MustNewConstMetric(dMADOut, prometheus.GaugeValue, float64(st.Outstanding))
	for _, r := range dropReasons {
		ch <- prometheus.MustNewConstMetric(dMADDropped, prometheus.CounterValue, float64(st.Drops[r]), r.String())
	}
	ch <- prometheus.MustNewConstMetric(dMADRecvErr, prometheus.CounterValue, float64(st.RecvErrors))
	ch <- prometheus.MustNewConstMetric(dMADResp, prometheus.CounterValue, float64(st.Responses))
}

func collectAgent(ch chan<- prometheus.Metric, st agent.Stats) {
	for _, attr := range []string{"ClassPortInfo", "SourceRoute"} {
		for _, res := range []string{agent.ResultOK, agent.ResultMismatch, agent.ResultBadHopCount, agent.ResultUnsupportedMethod} {
			ch <- prometheus.MustNewConstMetric(dAgentReq, prometheus.CounterValue, float64(st.Requests[[2]string{attr, res}]), attr, res)
		}
	}
	ch <- prometheus.MustNewConstMetric(dAgentReq, prometheus.CounterValue,
		float64(st.Requests[[2]string{"unknown", agent.ResultUnsupportedAttr}]), "unknown", agent.ResultUnsupportedAttr)
	for _, r := range []string{agent.DropRateLimited, agent.DropMalformed} {
		ch <- prometheus.MustNewConstMetric(dAgentDrop, prometheus.CounterValue, float64(st.Drops[r]), r)
	}
	ch <- prometheus.MustNewConstMetric(dAgentPings, prometheus.CounterValue, float64(st.Pings))
}
