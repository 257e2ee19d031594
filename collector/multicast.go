package collector

import (
	"context"

	"github.com/ibtracer/ibtracer_exporter/linkhealth"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// traceTarget is one trace of s and its path health: the unicast trace,
// or for a multicast destination (mlid:) the path over the group's MFTs
// from this node to the member (trace.TraceMulticast). A multicast trace
// sends no validation MAD (its hops are not_asked, with
// trace.MulticastNote) and gets no path health: the link health reads
// follow the unicast path's ends, and the exporter reports the multicast
// path's hops, status and changes only (docs/metrics.md).
func traceTarget(ctx context.Context, tr *trace.Tracer, hc *linkhealth.Checker, s *destState) (*trace.Result, *linkhealth.PathHealth) {
	if s.cfg.Multicast() {
		r := tr.TraceMulticast(ctx, s.cfg.MLID, 0, s.target.LID)
		r.Destination = s.target // its name
		return r, nil
	}
	r := tr.Trace(ctx, s.target)
	return r, checkHealth(ctx, hc, r)
}

// infoAddress is the address and ibtracer arguments of the info series.
func (s *destState) infoAddress() (address, args string) {
	if s.cfg.Multicast() {
		return s.cfg.MulticastAddress()
	}
	return s.target.Address(), s.target.Args()
}
