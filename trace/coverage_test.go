package trace

import "fmt"

// predicted counts r's hops whose validation MAD arrived where the tables
// predict, over the traced link or another.
func predicted(r *Result) int {
	return r.Count(AgentValidated) + r.Count(AgentValidatedOtherLink)
}

// checkCoverage fails unless every hop of r called validated was checked
// over the traced path's link into it, as the walk found it, every hop
// called validated_other_link over another, and the coverage counts the
// first kind.
func checkCoverage(r *Result) error {
	confirmed := 0
	for i := 1; i < len(r.Hops); i++ {
		h, prev := &r.Hops[i], &r.Hops[i-1]
		traced := h.ExpectedFrom == prev.NodeGUID && h.ExpectedFromPort == prev.OutPort && h.ExpectedInPort == h.InPort
		switch h.Agent {
		case AgentValidated:
			if !traced {
				return fmt.Errorf("hop %d %s validated over %s port %d -> %d, the path enters from %s port %d -> %d",
					i, h.NodeDesc, h.ExpectedFrom, h.ExpectedFromPort, h.ExpectedInPort, prev.NodeGUID, prev.OutPort, h.InPort)
			}
			confirmed++
		case AgentValidatedOtherLink:
			if traced {
				return fmt.Errorf("hop %d %s validated_other_link over the traced link", i, h.NodeDesc)
			}
		}
	}
	if c := r.Coverage(); c.Confirmed != confirmed || c.Links != r.PathHops() {
		return fmt.Errorf("coverage %+v, want %d of %d", c, confirmed, r.PathHops())
	}
	return nil
}
