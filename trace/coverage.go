package trace

import "fmt"

// onTracedLink says whether the route of hop i's validation MAD ends with
// the traced path's link into hop i: the same previous node, out port
// and in port (docs/protocol.md, "What a verdict covers"). Only then does
// a validated answer confirm that link.
func onTracedLink(hops []Hop, i int) bool {
	h, prev := &hops[i], &hops[i-1]
	return h.ExpectedFrom == prev.NodeGUID && h.ExpectedFromPort == prev.OutPort && h.ExpectedInPort == h.InPort
}

// settleLink makes hop i's validated verdict validated_other_link when its
// validation MAD's last link is not the traced one. A shared verdict is
// kept as the validator gave it (sma.go) and settled by each trace
// against its own path.
func settleLink(hops []Hop, i int) {
	if hops[i].Agent == AgentValidated && !onTracedLink(hops, i) {
		hops[i].Agent = AgentValidatedOtherLink
	}
}

// Coverage is how much of a traced path the validation confirmed: Links
// is the path's links (PathHops), Confirmed those a validation MAD
// crossed last and found entering where the tables say (the hops
// validated over the traced link). An agent or an SMA sees only the port
// a MAD arrived by, so a MAD confirms only its route's last link, and a
// switch is reached only by its own LID's route: where that route enters
// the switch by another cable than the traced path, no MAD of the trace
// confirms the traced link (docs/protocol.md, "What a verdict covers").
type Coverage struct {
	Links     int `json:"links"`
	Confirmed int `json:"confirmed"`
}

// Coverage returns r's coverage.
func (r *Result) Coverage() Coverage {
	c := Coverage{Links: r.PathHops()}
	for i := 1; i < len(r.Hops); i++ {
		if r.Hops[i].Agent == AgentValidated {
			c.Confirmed++
		}
	}
	return c
}

// Add adds o's links and confirmed links to c.
func (c *Coverage) Add(o Coverage) {
	c.Links += o.Links
	c.Confirmed += o.Confirmed
}

// Ratio is Confirmed / Links, 0 for a path without links.
func (c Coverage) Ratio() float64 {
	if c.Links == 0 {
		return 0
	}
	return float64(c.Confirmed) / float64(c.Links)
}

// String is the text form: "3/4 links confirmed (75%)".
func (c Coverage) String() string {
	return fmt.Sprintf("%d/%d links confirmed (%.0f%%)", c.Confirmed, c.Links, 100*c.Ratio())
}

// checkedLink is the text naming the link hop h's validation MAD crossed
// last, for a hop validated over another link than the traced one:
// "S1 port 3 -> port 1".
func (h *Hop) checkedLink() string {
	from := h.ExpectedFromName
	if from == "" {
		from = h.ExpectedFrom.String()
	}
	return fmt.Sprintf("%s port %d -> port %d", from, h.ExpectedFromPort, h.ExpectedInPort)
}

// nameCheckedLinks gives every hop's ExpectedFromName: the site name
// name returns (nil: none), else the name of the path's hop that is that
// node.
func nameCheckedLinks(name func(guid uint64) string, hops []Hop) {
	for i := range hops {
		h := &hops[i]
		if h.ExpectedFrom == 0 {
			continue
		}
		if name != nil {
			if n := name(uint64(h.ExpectedFrom)); n != "" {
				h.ExpectedFromName = n
				continue
			}
		}
		for j := range hops {
			if hops[j].NodeGUID == h.ExpectedFrom {
				h.ExpectedFromName = hops[j].shownName()
				break
			}
		}
	}
}

// AsPredicted says whether s is a validation MAD's arrival where the
// tables predict: validated, over the traced link or over another.
func (s AgentStatus) AsPredicted() bool {
	return s == AgentValidated || s == AgentValidatedOtherLink
}
