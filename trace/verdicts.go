package trace

import (
	"fmt"
	"strings"
)

// Verdicts counts the hops of a path after the source by the agent's
// verdict. The one-line summary, ibtracer's --all totals and the JSON
// report all count with it, in the same words (docs/architecture.md,
// "The life of a trace", step 5).
type Verdicts struct {
	Validated int `json:"validated"`
	// ValidatedOtherLink: hops whose validation MAD arrived as the tables
	// say, over another link than the traced path's (coverage.go).
	ValidatedOtherLink int `json:"validated_other_link"`
	Mismatch           int `json:"mismatch"`
	IngressUnknown     int `json:"ingress_unknown"`
	Unsupported        int `json:"unsupported"`
	Lost               int `json:"lost"`
	NotAsked           int `json:"not_asked"`
	Unproven           int `json:"unproven"`
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
	v.IngressUnknown += o.IngressUnknown
	v.Unsupported += o.Unsupported
	v.Lost += o.Lost
	v.NotAsked += o.NotAsked
	v.Unproven += o.Unproven
}

// NotValidated is the hops neither validated over the traced link nor
// mismatched: validated over another link (the traced one unchecked), no
// agent (unsupported), no usable answer (lost), an agent that cannot tell
// the port (ingress unknown) or who it is (unproven), or not asked.
func (v Verdicts) NotValidated() int {
	return v.ValidatedOtherLink + v.IngressUnknown + v.Unsupported + v.Lost + v.NotAsked + v.Unproven
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
	}{{v.ValidatedOtherLink, "validated over another link"}, {v.Unsupported, "unsupported"}, {v.Lost, "lost"}, {v.IngressUnknown, "ingress unknown"}, {v.NotAsked, "not asked"}, {v.Unproven, "unproven"}} {
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
		h.Agent == AgentMismatch || h.Agent == AgentIngressUnknown)
}
