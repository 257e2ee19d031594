package localize

// Cause says why a path is bad; its values are log and JSON strings.
type Cause string

// Why a path is bad (docs/metrics.md, "Link evidence").
const (
	// CauseFailed: the trace failed; its suspect is the link it could
	// not get past, when the previous path names it, else the links it
	// crossed (FromTrace).
	CauseFailed Cause = "failed"
	// CauseMismatch: a hop's validation says the path arrived on another
	// port (or at another node); the suspect is the link at whose far end
	// it did.
	CauseMismatch Cause = "mismatch"
	// CauseLost: a hop's validation was asked and never answered; the
	// suspects are the links in front of that hop.
	CauseLost Cause = "lost"
	// CauseLink: the link's health verdict is not ok (degraded, not
	// active, below expected, congested) or its error counters rose above
	// their limit; the suspect is that link.
	CauseLink Cause = "link"
	// CauseLatency: the destination's latency is above its threshold;
	// every link of the path is a suspect.
	CauseLatency Cause = "latency"
)

// Causes lists every cause, in the order above.
var Causes = []Cause{CauseFailed, CauseMismatch, CauseLost, CauseLink, CauseLatency}

// Path is the evidence of one destination: the links its current trace
// crossed, the links of its previous path, and, when it is bad now, why
// and which links can explain it.
type Path struct {
	// Links are the links the current trace crossed, from the source
	// (for a failed trace, the ones before the failure).
	Links []Link
	// Previous are the links of the destination's previous path (nil:
	// none, or the same as Links). They count as crossed, but a good
	// path exonerates only its current Links.
	Previous []Link
	// Bad says the path is bad now; Causes say why and Suspects which
	// links can explain it (each once; Blame keeps them so).
	Bad      bool
	Causes   []Cause
	Suspects []Link
}

// Blame marks the path bad for cause c, with links as the links that can
// explain it (added to the suspects, each once).
func (p *Path) Blame(c Cause, links ...Link) {
	p.Bad = true
	if !containsCause(p.Causes, c) {
		p.Causes = append(p.Causes, c)
	}
	for _, l := range links {
		if !contains(p.Suspects, l) {
			p.Suspects = append(p.Suspects, l)
		}
	}
}

// Crossed are the links the path crosses, current and previous, each
// once, in the order of Links then Previous.
func (p *Path) Crossed() []Link {
	out := make([]Link, 0, len(p.Links)+len(p.Previous))
	for _, ls := range [][]Link{p.Links, p.Previous} {
		for _, l := range ls {
			if !contains(out, l) {
				out = append(out, l)
			}
		}
	}
	return out
}

// contains is a linear search: a path has at most a few dozen links.
func contains(ls []Link, l Link) bool {
	for _, m := range ls {
		if m == l {
			return true
		}
	}
	return false
}

func containsCause(cs []Cause, c Cause) bool {
	for _, d := range cs {
		if d == c {
			return true
		}
	}
	return false
}
