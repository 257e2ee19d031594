package trace

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// Tracer traces destinations through one engine. It is safe for
// concurrent use; its traces share what each part of it keeps: the
// resolutions (resolver), the verdicts and agent support (validator), the
// confirmed paths (fastPath), the SA records (saReader) and the facts the
// walks read (facts).
type Tracer struct {
	e    *ibmad.Engine
	opts Options

	res   *resolver  // SA resolutions of destinations (resolve.go)
	val   *validator // the agents' and SMAs' verdicts (validate.go)
	fast  *fastPath  // validated paths a repeat trace confirms (fastpath.go)
	sa    *saReader  // SA-only discovery (sawalk.go)
	facts *facts     // shared SMP answers, for Options.ShareFacts (facts.go)
	// desc, top: a node's description and a switch's LinearFDBTop, which
	// do not expire (a DLID above the cached top re-reads it).
	desc *ttlCache[ibmad.GUID, string]
	top  *ttlCache[ibmad.GUID, uint16]

	health atomic.Pointer[portInfoHook] // the link health is told the walk's PortInfo reads
}

// New returns a Tracer on e.
func New(e *ibmad.Engine, o Options) *Tracer {
	o = o.withDefaults()
	return &Tracer{e: e, opts: o,
		res:   newResolver(o),
		val:   newValidator(o),
		fast:  newFastPath(o),
		sa:    newSAReader(o),
		facts: newFacts(o),
		desc:  newTTLCache[ibmad.GUID, string](0, cacheSize, o.Clock.Now),
		top:   newTTLCache[ibmad.GUID, uint16](0, cacheSize, o.Clock.Now),
	}
}

// Engine returns the tracer's engine.
func (t *Tracer) Engine() *ibmad.Engine { return t.e }

// Options returns the tracer's options, defaults filled in (New).
func (t *Tracer) Options() Options { return t.opts }

// Mode returns the discovery mode the tracer's next trace uses: smp or sa.
func (t *Tracer) Mode() Discovery {
	if t.sa.use() {
		return DiscoverySA
	}
	return DiscoverySMP
}

// Fallbacks counts the auto-mode traces that fell back to the SA.
func (t *Tracer) Fallbacks() int64 { return t.sa.fallbacks.Load() }

// SARequests returns the SA record requests the tracer's SA-mode walks
// sent, by record name (docs/metrics.md: ibtracer_sa_record_requests_total).
func (t *Tracer) SARequests() map[string]uint64 { return t.sa.requests.byName() }

// TraceMulticast traces the path the multicast forwarding tables give
// MLID mlid from the port whose LID is from (0: the local port) to the
// port that owns dlid, as `ibtracert -m MLID SRC DST` does: a breadth-first
// directed-route walk from the source over the ports each switch's MFT
// entry for mlid selects (docs/architecture.md, "Multicast traces"). No
// hop is validated: see MulticastNote.
func (t *Tracer) TraceMulticast(ctx context.Context, mlid, from, dlid uint16) *Result {
	r := &Result{Destination: Destination{LID: dlid}, DLID: dlid, From: from, MLID: mlid, Start: time.Now(),
		Discovery: DiscoverySMP, ValidationNote: MulticastNote}
	w := newWalk(t, ctx, ibmad.PortAttributes{}, dlid)
	w.viaSA = false // the SA has no MFT records this walk could use
	w.fresh.Store(true)
	hops, ferr := newMulticastWalk(w, mlid).path(from) // multicast.go
	r.Hops = hops
	for i := range r.Hops {
		if i > 0 {
			r.Hops[i].Agent = AgentNotAsked
		}
	}
	r.MADs, r.SharedFacts = w.madCount(), int(w.shared.Load())
	r.Duration = time.Since(r.Start)
	if ferr != nil {
		r.Status, r.Reason, r.Err = ferr.Status, ferr.Reason, ferr
		notAsked(r.Hops)
		return r
	}
	r.Status = StatusOK
	return r
}

// forget drops what a failed trace must not reuse, and nothing else: one
// failing destination must not cost the others their shared caches. It
// drops the destination's confirmed path and resolution and, after a
// status 7 (mismatch), the shared verdicts of the nodes on hops, which
// are asked again. The LFT blocks the failed trace's walk read need no
// forgetting: they were read afresh and replaced the shared copies
// (walk.lftBlock).
func (t *Tracer) forget(dlid uint16, d Destination, hops []Hop, mismatch bool) {
	t.fast.paths.Delete(dlid)
	t.res.resolved.Delete(d)
	if mismatch {
		t.val.forgetNodes(hops)
	}
}

func (t *Tracer) log(warn bool, keyvals ...any) {
	if t.opts.Log != nil {
		t.opts.Log(warn, keyvals...)
	}
}

// What the link health (package linkhealth; docs/metrics.md, "Link
// health") needs of the tracer: to send its reads the way a trace sends
// its MADs, and to be told the PortInfo the walk reads anyway.

// Probe sends the MADs of one path's health check through the tracer's
// engine, with the tracer's timeout and retries, and counts them the way
// a trace counts its own (Result.MADs).
type Probe struct {
	w *walk
}

// NewProbe returns a probe for the path to dlid.
func (t *Tracer) NewProbe(ctx context.Context, dlid uint16) *Probe {
	w := newWalk(t, ctx, ibmad.PortAttributes{}, dlid)
	w.fresh.Store(true) // the health reads the ports now, never another trace's answer (facts.go)
	return &Probe{w: w}
}

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

// PortInfo reads PortInfo of a port of the node at the end of the
// directed route path (port 0: a switch's management port).
func (p *Probe) PortInfo(path ibmad.DRPath, port uint8) (ibmad.PortInfo, error) {
	return p.w.portInfo(path, port)
}

// Do sends req with the tracer's timeout and retries.
func (p *Probe) Do(req *ibmad.Request) (*ibmad.Response, error) { return p.w.do(req) }

// MADs counts the MADs the probe sent, retries included.
func (p *Probe) MADs() int { return p.w.madCount() }

// GMPAddress is the address of the probe's GMP to lid, a port of a hop of
// its path: the path's SL and never a GRH. Every hop of a Result is a port
// of our subnet (a path to another subnet stops at the router's port in
// ours: subnet.go), reached by its LID alone, as the validation MADs to
// the hops before the destination are.
func (p *Probe) GMPAddress(lid uint16) ibmad.Address { return p.w.addr.GMPAddress(lid, false) }

// SL is the SL of the probe's GMPs.
func (p *Probe) SL() uint8 { return p.w.addr.SL }

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

// sender sends one walk's MADs through the tracer's engine with its
// timeout and retries, and counts them, retries included (Result.MADs).
// It is the walk's sa.Sender: the SA's records are asked through it.
type sender struct {
	e        *ibmad.Engine
	timeout  time.Duration
	retries  int  // as an ibmad.Request takes it
	noRetry  bool // as an ibmad.Request takes it
	attempts int  // what a request never answered costs
	mads     atomic.Int64
}

func newSender(e *ibmad.Engine, o *Options) *sender {
	retries, none := o.requestRetries()
	return &sender{e: e, timeout: o.Timeout, retries: retries, noRetry: none, attempts: o.attempts()}
}

// Do sends req and waits for its answer.
func (s *sender) Do(ctx context.Context, req *ibmad.Request, resp *ibmad.Response) error {
	req.Timeout, req.Retries, req.NoRetry = s.timeout, s.retries, s.noRetry
	err := s.e.Do(ctx, req, resp)
	if err == nil {
		s.mads.Add(int64(resp.Attempts))
	} else {
		s.mads.Add(int64(s.attempts))
	}
	return err
}

// GetTable asks for a table (RMPP), counted as one MAD.
func (s *sender) GetTable(ctx context.Context, req *ibmad.Request, tr ibmad.TableRequest) (*ibmad.Table, error) {
	req.Timeout, req.Retries, req.NoRetry = s.timeout, s.retries, s.noRetry
	t, err := s.e.GetTable(ctx, req, tr)
	s.mads.Add(1)
	return t, err
}
