package trace

import (
	"context"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// ProbeFor returns a probe for r's path that addresses its GMPs (the link
// health's PerfMgt reads) on the SL r's trace used (r.Addressing: the
// PathRecord's unless --sl/sl: was given; docs/protocol.md, "SL and
// GRH"). On a QoS fabric that SL is the one the path is known to carry;
// the tracer's own (Options.SL) may map to a VL the path does not serve.
// A result without addressing (a multicast trace, a failure before
// resolution) gets the tracer's SL, as NewProbe's.
func (t *Tracer) ProbeFor(ctx context.Context, r *Result) *Probe {
	p := t.NewProbe(ctx, r.DLID)
	if r.Addressing != nil {
		p.w.addr = *r.Addressing
	}
	return p
}

// GMPAddress is the address of the probe's GMP to lid, a port of a hop of
// its path: the path's SL and never a GRH. Every hop of a Result is a port
// of our subnet (a path to another subnet stops at the router's port in
// ours: subnet.go), reached by its LID alone, as the validation MADs to
// the hops before the destination are.
func (p *Probe) GMPAddress(lid uint16) ibmad.Address { return p.w.addr.GMPAddress(lid, false) }

// SL is the SL of the probe's GMPs.
func (p *Probe) SL() uint8 { return p.w.addr.SL }
