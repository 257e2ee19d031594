package trace

import (
	"context"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// What the link health (package linkhealth; docs/metrics.md, "Link
// health") needs of the tracer: to send its reads the way a trace sends
// its MADs, and to be told the PortInfo the walk reads anyway.

// Probe sends the MADs of one path's health check through the tracer's
// engine, with the tracer's timeout and retries, and counts them the way
// a trace counts its own (Result.MADs).
type Probe struct{ w *walk }

// NewProbe returns a probe for the path to dlid.
func (t *Tracer) NewProbe(ctx context.Context, dlid uint16) *Probe {
	w := t.newWalk(ctx, ibmad.PortAttributes{}, dlid)
	w.fresh.Store(true) // the health reads the ports now, never another trace's answer (facts.go)
	return &Probe{w: w}
}

// PortInfo reads PortInfo of a port of the node at the end of the
// directed route path (port 0: a switch's management port).
func (p *Probe) PortInfo(path ibmad.DRPath, port uint8) (ibmad.PortInfo, error) {
	return p.w.portInfo(path, port)
}

// Do sends req with the tracer's timeout and retries.
func (p *Probe) Do(req *ibmad.Request) (*ibmad.Response, error) { return p.w.do(req) }

// MADs counts the MADs the probe sent, retries included.
func (p *Probe) MADs() int { return int(p.w.mads.Load()) }

// portInfoHook is told each PortInfo (modifier 0) the walk reads, with the
// NodeInfo of its node.
type portInfoHook func(ni *ibmad.NodeInfo, pi *ibmad.PortInfo)

// OnPortInfo has f told, from now on, every PortInfo (modifier 0) a walk
// reads, with the NodeInfo of the node it read it from: at a switch its
// port 0, whose CapabilityMask says whether its ports' extended speeds are
// valid; at a CA the port the walk arrived on. The link health reuses
// them instead of reading them again. nil stops it.
func (t *Tracer) OnPortInfo(f func(ni *ibmad.NodeInfo, pi *ibmad.PortInfo)) {
	if f == nil {
		t.health.Store(nil)
		return
	}
	h := portInfoHook(f)
	t.health.Store(&h)
}

// notePortInfo tells the hook, if any, what the walk read (walk.follow).
func (t *Tracer) notePortInfo(ni *ibmad.NodeInfo, pi *ibmad.PortInfo) {
	if h := t.health.Load(); h != nil {
		(*h)(ni, pi)
	}
}

// Options returns the tracer's options, defaults filled in (New).
func (t *Tracer) Options() Options { return t.opts }
