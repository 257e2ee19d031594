package main

import (
	"fmt"
	"io"
	"sync"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// skipSource drops from the --all list the port the traces start from:
// the local port (every LID of its LMC range).
func skipSource(all []trace.Destination, src ibmad.PortAttributes) []trace.Destination {
	lmc := src.LMC
	if src.NodeType == ibmad.NodeTypeSwitch {
		lmc = 0
	}
	lo, hi := uint32(src.LID), uint32(src.LID)+uint32(1)<<(lmc&7)-1
	out := all[:0:0]
	for _, d := range all {
		if src.LID != 0 && uint32(d.LID) >= lo && uint32(d.LID) <= hi {
			continue
		}
		out = append(out, d)
	}
	return out
}

// progress shows --all's progress on a terminal: one line, rewritten as
// traces finish, erased at the end. A nil progress shows nothing.
type progress struct {
	mu             sync.Mutex
	w              io.Writer
	total, n, fail int
}

func (p *progress) done(r *trace.Result) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	if !r.Status.Succeeded() {
		p.fail++
	}
	fmt.Fprintf(p.w, "\r\033[Kibtracer: traced %d/%d, %d failing", p.n, p.total, p.fail)
}

// grow counts one more destination to trace (--all names them as the SA
// answers: allstream.go).
func (p *progress) grow() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.total++
	p.mu.Unlock()
}

func (p *progress) finish() {
	if p == nil {
		return
	}
	fmt.Fprint(p.w, "\r\033[K")
}

// totalsOf is --all's last line. The hops it counts are those of the ok
// traces, by verdict, in the words of their lines (trace.Verdicts), so
// that the lines add up to it, and their links a validation MAD confirmed
// (trace.Coverage); then the MADs the whole run sent (m), of
// which those the traces count (trace.Result.MADs), those of the link
// health checks and the rest (the listing of the CA ports, above all);
// and the facts the traces took from one another instead of asking
// (trace.Result.SharedFacts).
func totalsOf(rs []*trace.Result, m runMADs) string {
	var ok, mismatch, unreachable, other, hops, mads, shared int
	var v trace.Verdicts
	var c trace.Coverage
	for _, r := range rs {
		mads += r.MADs
		shared += r.SharedFacts
		switch r.Status {
		case trace.StatusOK, trace.StatusLeftSubnet:
			ok++
			hops += r.PathHops()
			v.Add(r.Verdicts())
			c.Add(r.Coverage())
		case trace.StatusMismatch:
			mismatch++
		case trace.StatusUnreachable:
			unreachable++
		default:
			other++
		}
	}
	s := fmt.Sprintf("totals: %d traced, %d ok, %d mismatches, %d unreachable", len(rs), ok, mismatch, unreachable)
	if other > 0 {
		s += fmt.Sprintf(", %d failed otherwise", other)
	}
	return s + fmt.Sprintf("; hops of the ok traces: %d, %s; %s; MADs: %d sent (%s), %d facts shared rather than asked",
		hops, v, c, m.sent, madsOf(m, mads), shared)
}

// madsOf says who sent a run's MADs: the traces (they count tracesMADs),
// the link health checks, and the rest of the run. A trace counts the
// attempts of a request that failed as sent (trace.Result.MADs); when
// that makes the traces' count exceed the engine's, it is given as theirs.
func madsOf(m runMADs, tracesMADs int) string {
	rest := m.sent - m.health - tracesMADs
	if rest < 0 {
		return fmt.Sprintf("the traces count %d", tracesMADs)
	}
	s := fmt.Sprintf("%d by the traces", tracesMADs)
	if m.health > 0 {
		s += fmt.Sprintf(", %d by the link health checks", m.health)
	}
	return s + fmt.Sprintf(", %d by the rest of the run", rest)
}
