package collector

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/internal/fabricstr"
	"github.com/ibtracer/ibtracer_exporter/internal/nodenamemap"
	"github.com/ibtracer/ibtracer_exporter/linkhealth"
	"github.com/ibtracer/ibtracer_exporter/localize"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// ibtracer_link_info names both ends of a link by node description, for
// the links the alerts are about: those a bad path names (the evidence
// series) and those whose health is not ok or that are congested
// (docs/metrics.md, "Link evidence"). hop_info cannot name them: it
// exists only for destinations with hop series (not discovered ones by
// default), goes while a destination's trace fails, and never has hop 0,
// the exporter's own node.
var dLinkInfo = desc("link_info", "The node descriptions of a link's two ends, 1 for every link with evidence "+
	"(link_bad_paths) or that is unhealthy or congested (link_healthy 0, link_status congested); "+
	"empty when no trace or health check read it.",
	append(append([]string{}, localize.LabelNames...), "node_desc", "remote_node_desc", "node_name", "remote_node_name")...)

// collectLinkInfo emits link_info for the links of named (the evidence's)
// and the links of unhealthy (collectHealth's, not healthy or
// congested), each once, their ends' descriptions from the health
// check's link ends (which copy the trace's hops), else from the hops of
// the destinations' last and previous paths; and the links of left
// (collectLeftDown's: links paths left that are down), their ends'
// descriptions from the old paths' hops.
func collectLinkInfo(ch chan<- prometheus.Metric, dests []*destState, unhealthy []*linkhealth.Link, named []localize.Link,
	left map[localize.Link][2]string, names nodenamemap.Map) {
	if len(unhealthy) == 0 && len(named) == 0 && len(left) == 0 {
		return
	}
	links := make(map[localize.Link]bool, len(named)+len(unhealthy)+len(left))
	descs := map[ibmad.GUID]string{}
	for _, l := range named {
		links[l] = true
	}
	for l, d := range left {
		links[l] = true
		for i, g := range []ibmad.GUID{l.NodeGUID, l.RemoteNodeGUID} {
			if d[i] != "" {
				descs[g] = d[i]
			}
		}
	}
	for _, l := range unhealthy {
		links[localize.NewLink(l.A.NodeGUID, l.A.Port, l.B.NodeGUID, l.B.Port)] = true
		for _, end := range []*linkhealth.LinkEnd{&l.A, &l.B} {
			if end.NodeDesc != "" {
				descs[end.NodeGUID] = end.NodeDesc
			}
		}
	}
	missing := map[ibmad.GUID]bool{}
	for l := range links {
		for _, g := range []ibmad.GUID{l.NodeGUID, l.RemoteNodeGUID} {
			if _, ok := descs[g]; !ok {
				missing[g] = true
			}
		}
	}
	hopDescs(dests, missing, descs)
	keys := make([]localize.Link, 0, len(links))
	for l := range links {
		keys = append(keys, l)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].Less(keys[j]) })
	for _, l := range keys {
		a, b := descs[l.NodeGUID], descs[l.RemoteNodeGUID]
		lv := append(l.Labels(), fabricstr.String(a), fabricstr.String(b),
			fabricstr.String(nodeName(names.Name(uint64(l.NodeGUID)), a)), fabricstr.String(nodeName(names.Name(uint64(l.RemoteNodeGUID)), b)))
		ch <- prometheus.MustNewConstMetric(dLinkInfo, prometheus.GaugeValue, 1, lv...)
	}
}

// hopDescs fills descs with the node descriptions of the nodes in
// missing, from the hops of the destinations' last and previous paths,
// until none is missing.
func hopDescs(dests []*destState, missing map[ibmad.GUID]bool, descs map[ibmad.GUID]string) {
	for _, s := range dests {
		if len(missing) == 0 {
			return
		}
		s.mu.Lock()
		cur := s.last
		s.mu.Unlock()
		if cur == nil {
			continue
		}
		for _, r := range []*trace.Result{cur, s.previousPath(cur)} {
			if r == nil {
				continue
			}
			for i := range r.Hops {
				if h := &r.Hops[i]; missing[h.NodeGUID] && h.NodeDesc != "" {
					descs[h.NodeGUID] = h.NodeDesc
					delete(missing, h.NodeGUID)
				}
			}
		}
	}
}
