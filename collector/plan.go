package collector

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibtracer/ibtracer_exporter/internal/fabricstr"
	"github.com/ibtracer/ibtracer_exporter/internal/nodenamemap"
	"github.com/ibtracer/ibtracer_exporter/linkhealth"
	"github.com/ibtracer/ibtracer_exporter/localize"
	"github.com/ibtracer/ibtracer_exporter/plan"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// The fabric as planned (docs/metrics.md, "The fabric as planned"): with
// a plan in the configuration, every link the last paths cross is judged
// against it at each scrape. A series per link only for the links not as
// planned, so the series are bounded by the faults, not by the fabric;
// the counts by status always.
var (
	dPlanStatus = desc("link_plan_status", "A link the last traced paths cross that is not as the cabling plan (plan:) says, 1 per link: "+
		"status miswired, below_plan or not_in_plan; its ends by name (node-name map, else node description), and want and remote_want, "+
		"where the plan cables each end (NAME[PORT]; empty when that end is as planned or the plan cables nothing there).",
		append(append([]string{}, localize.LabelNames...), "node_name", "remote_node_name", "status", "want", "remote_want")...)
	dPlanLinks = desc("plan_links", "Links the last traced paths cross, judged against the cabling plan, by status "+
		"(planned, miswired, below_plan, not_in_plan).", "status")
	dPlanNotCrossed = desc("plan_links_not_crossed", "Planned links no last traced path of this exporter crosses: "+
		"not seen here, which says nothing of the cable unless no exporter's paths cross it.")
)

// collectPlan judges the links of the destinations' last paths against
// p (nil: no plan, nothing emitted).
func collectPlan(ch chan<- prometheus.Metric, p *plan.Plan, dests []*destState, names nodenamemap.Map) {
	if p == nil {
		return
	}
	found := pathLinks(dests, names)
	counts := map[string]int{}
	crossed := map[*plan.Link]bool{}
	for _, f := range found {
		j := p.Judge(f.found)
		counts[j.Status]++
		if j.Status == plan.Planned || j.Status == plan.BelowPlan {
			crossed[j.Plan] = true
			if j.Status == plan.Planned {
				continue
			}
		}
		want := func(e *plan.End) string {
			if e == nil {
				return ""
			}
			return e.String()
		}
		lv := append(f.link.Labels(), fabricstr.String(f.found.A.Label()), fabricstr.String(f.found.B.Label()), j.Status,
			fabricstr.String(want(j.WantA)), fabricstr.String(want(j.WantB)))
		ch <- prometheus.MustNewConstMetric(dPlanStatus, prometheus.GaugeValue, 1, lv...)
	}
	for _, s := range plan.Statuses {
		ch <- prometheus.MustNewConstMetric(dPlanLinks, prometheus.GaugeValue, float64(counts[s]), s)
	}
	ch <- prometheus.MustNewConstMetric(dPlanNotCrossed, prometheus.GaugeValue, float64(len(p.Links)-len(crossed)))
}

type pathLink struct {
	link  localize.Link
	found plan.Found // A is link's first end
}

// pathLinks are the links of the destinations' last walked paths, once
// each, in link order; the width and speed from the path health, when it
// read them.
func pathLinks(dests []*destState, names nodenamemap.Map) []pathLink {
	seen := map[localize.Link]int{}
	var out []pathLink
	for _, s := range dests {
		s.mu.Lock()
		r, ph := s.last, s.health
		s.mu.Unlock()
		if r == nil || !r.Status.Walked() {
			continue
		}
		rates := map[int]*linkhealth.Link{}
		if ph != nil {
			for i := range ph.Links {
				rates[ph.Links[i].Hop] = &ph.Links[i]
			}
		}
		for i := 1; i < len(r.Hops); i++ {
			a, b := &r.Hops[i-1], &r.Hops[i]
			if a.OutPort == 0 || b.InPort == 0 {
				continue
			}
			l := localize.NewLink(a.NodeGUID, a.OutPort, b.NodeGUID, b.InPort)
			if _, dup := seen[l]; dup {
				continue
			}
			ea, eb := hopEnd(a, a.OutPort, names), hopEnd(b, b.InPort, names)
			if l.NodeGUID != a.NodeGUID || l.Port != a.OutPort {
				ea, eb = eb, ea
			}
			f := plan.Found{A: ea, B: eb}
			if hl := rates[b.Hop]; hl != nil {
				f.Width, f.Speed = hl.Width, hl.Speed
			}
			seen[l] = len(out)
			out = append(out, pathLink{link: l, found: f})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].link.Less(out[j].link) })
	return out
}

func hopEnd(h *trace.Hop, port uint8, names nodenamemap.Map) plan.FoundEnd {
	return plan.FoundEnd{GUID: h.NodeGUID, Desc: h.NodeDesc, Name: names.Name(uint64(h.NodeGUID)), Port: port, Type: h.NodeType}
}
