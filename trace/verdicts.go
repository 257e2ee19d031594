package trace

import (
	"fmt"
	"strings"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// Verdicts counts the hops of a path after the source by the agent's
// verdict. The one-line summary, ibtracer's --all totals and the JSON
// report all count with it, in the same words (docs/architecture.md,
// "The life of a trace", step 5).
type Verdicts struct {
	Validated int `json:"validated"`
	// ValidatedOtherLink: hops whose validation MAD arrived as the tables
	// say, over another link than the traced path's (settleLink).
	ValidatedOtherLink int `json:"validated_other_link"`
	Mismatch           int `json:"mismatch"`
	// MismatchOtherLink: hops whose validation MAD, routed in over
	// another link than the traced path's, arrived elsewhere than the
	// tables say (settleLink): a divergence off this path.
	MismatchOtherLink int `json:"mismatch_other_link"`
	IngressUnknown    int `json:"ingress_unknown"`
	Unsupported       int `json:"unsupported"`
	Lost              int `json:"lost"`
	NotAsked          int `json:"not_asked"`
	Unproven          int `json:"unproven"`
}

// Verdicts counts r's hops after the source.
func (r *Result) Verdicts() Verdicts {
	var v Verdicts
	for i := range r.Hops {
		switch r.Hops[i].verdict() {
		case AgentValidated:
			v.Validated++
		case AgentValidatedOtherLink:
			v.ValidatedOtherLink++
		case AgentMismatch:
			v.Mismatch++
		case AgentMismatchOtherLink:
			v.MismatchOtherLink++
		case AgentIngressUnknown:
			v.IngressUnknown++
		case AgentUnsupported:
			v.Unsupported++
		case AgentLost:
			v.Lost++
		case AgentNotAsked:
			v.NotAsked++
		case AgentUnproven:
			v.Unproven++
		}
	}
	return v
}

// Add adds o's counts to v.
func (v *Verdicts) Add(o Verdicts) {
	v.Validated += o.Validated
	v.ValidatedOtherLink += o.ValidatedOtherLink
	v.Mismatch += o.Mismatch
	v.MismatchOtherLink += o.MismatchOtherLink
	v.IngressUnknown += o.IngressUnknown
	v.Unsupported += o.Unsupported
	v.Lost += o.Lost
	v.NotAsked += o.NotAsked
	v.Unproven += o.Unproven
}

// NotValidated is the hops neither validated over the traced link nor
// mismatched: validated or mismatched over another link (the traced one unchecked), no
// agent (unsupported), no usable answer (lost), an agent that cannot tell
// the port (ingress unknown) or who it is (unproven), or not asked.
func (v Verdicts) NotValidated() int {
	return v.ValidatedOtherLink + v.MismatchOtherLink + v.IngressUnknown + v.Unsupported + v.Lost + v.NotAsked + v.Unproven
}

// String is the counts' text form: "3 validated, 2 not validated (1
// validated over another link, 1 lost)"; a category that is zero is left out of the
// parenthesis, mismatched hops are shown only when there are some.
func (v Verdicts) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d validated", v.Validated)
	if v.Mismatch > 0 {
		fmt.Fprintf(&b, ", %d mismatched", v.Mismatch)
	}
	fmt.Fprintf(&b, ", %d not validated", v.NotValidated())
	var parts []string
	for _, c := range []struct {
		n    int
		word string
	}{{v.ValidatedOtherLink, "validated over another link"}, {v.MismatchOtherLink, "mismatched over another link"}, {v.Unsupported, "unsupported"}, {v.Lost, "lost"}, {v.IngressUnknown, "ingress unknown"}, {v.NotAsked, "not asked"}, {v.Unproven, "unproven"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.word))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(parts, ", "))
	}
	return b.String()
}

// AgentAnswered says whether h's verdict is the answer of its own vendor
// agent: only then is its RTT the end-to-end latency. An SMA's answer
// crosses VL15 and the node's management CPU, not the data path
// (docs/metrics.md, "Latency").
func (h *Hop) AgentAnswered() bool {
	return h.ValidatedBy == ByAgent && (h.Agent == AgentValidated || h.Agent == AgentValidatedOtherLink ||
		h.Agent == AgentMismatch || h.Agent == AgentMismatchOtherLink || h.Agent == AgentIngressUnknown)
}

// onTracedLink says whether the route of hop i's validation MAD ends with
// the traced path's link into hop i: the same previous node, out port
// and in port (docs/protocol.md, "What a verdict covers"). Only then does
// a validated answer confirm that link.
func onTracedLink(hops []Hop, i int) bool {
	h, prev := &hops[i], &hops[i-1]
	return h.ExpectedFrom == prev.NodeGUID && h.ExpectedFromPort == prev.OutPort && h.ExpectedInPort == h.InPort
}

// settleLink makes hop i's validated verdict validated_other_link, and
// its mismatch mismatch_other_link, when its validation MAD's last link
// is not the traced one. A shared verdict is kept as the validator gave
// it (sma.go) and settled by each trace against its own path.
func settleLink(hops []Hop, i int) {
	if onTracedLink(hops, i) {
		return
	}
	switch hops[i].Agent {
	case AgentValidated:
		hops[i].Agent = AgentValidatedOtherLink
	case AgentMismatch:
		hops[i].Agent = AgentMismatchOtherLink
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

// Mismatched says whether s is a validation MAD's arrival elsewhere than
// the tables predict: on the traced link or over another.
func (s AgentStatus) Mismatched() bool {
	return s == AgentMismatch || s == AgentMismatchOtherLink
}

// AsPredicted says whether s is a validation MAD's arrival where the
// tables predict: validated, over the traced link or over another.
func (s AgentStatus) AsPredicted() bool {
	return s == AgentValidated || s == AgentValidatedOtherLink
}

// Divergence names the switch whose data plane sent a mismatched hop's
// validation MAD elsewhere than its forwarding table says
// (docs/protocol.md, "Which switch diverged"): the neighbour at the port
// the MAD arrived by, which sent it out of OutPort while its LFT entry
// for the LID asked names LFTPort.
type Divergence struct {
	Switch     ibmad.GUID
	SwitchName string // its site name (NameHops) or description
	OutPort    uint8  // the port it sent the MAD by: toward the hop's actual in port
	LFTPort    uint8  // the port its LFT names for the LID the MAD was addressed to
}

// String is the text form: "L0 (0x...) sent it out of port 7, its LFT
// says port 6".
func (d *Divergence) String() string {
	return fmt.Sprintf("%s (%s) sent it out of port %d, its LFT says port %d", d.SwitchName, d.Switch, d.OutPort, d.LFTPort)
}

// divergenceText is the hops' diverging switches for a mismatch's message:
// "; diverging switch L0 (0x...), seen at hop 2 S1"; "" when none is
// named.
func divergenceText(hops []Hop) string {
	var parts []string
	for i := range hops {
		if d := hops[i].Diverged; d != nil {
			parts = append(parts, fmt.Sprintf("%s (%s), seen at hop %d %s", d.SwitchName, d.Switch, hops[i].Hop, name(&hops[i])))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "; diverging switch " + strings.Join(parts, "; ")
}

// offPathText is what a successful trace's summary adds for its hops
// mismatched over another link: "; off this path: hop 3 L1 arrived on
// port 6 by S0 port 3 -> port 5: diverging switch ..."; "" when none.
func offPathText(hops []Hop) string {
	var parts []string
	for i := range hops {
		h := &hops[i]
		if h.Agent != AgentMismatchOtherLink {
			continue
		}
		p := fmt.Sprintf("hop %d %s arrived on port %d, its own LID's route predicts %s", h.Hop, name(h), h.ActualInPort, h.checkedLink())
		if h.Diverged != nil {
			p += ": diverging switch " + h.Diverged.String()
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return ""
	}
	return "; off this path: " + strings.Join(parts, "; ")
}

// nameDiverged gives every divergence its switch's site name, when name
// has one.
func nameDiverged(name func(guid uint64) string, hops []Hop) {
	for i := range hops {
		if d := hops[i].Diverged; d != nil {
			if n := name(uint64(d.Switch)); n != "" {
				d.SwitchName = n
			}
		}
	}
}
