package linkhealth

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/internal/ttlcache"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// Checker reads the health of traced paths. It is safe for
// concurrent use; reads are shared across paths for Options.Share.
type Checker struct {
	t    *trace.Tracer
	opts Options
	now  func() time.Time // the tracer's clock (trace.Options.Now)

	infos    *ttlcache.Cache[portKey, portRead]
	counters *ttlcache.Cache[counterKey, counterRead]
	prev     *ttlcache.Cache[portKey, counterSnap] // the last reading of each port, for increments
	caps     *ttlcache.Cache[ibmad.GUID, uint32]   // a switch's port 0 CapabilityMask
	pmaCaps  *ttlcache.Cache[ibmad.GUID, pmaCaps]
	totals   *ttlcache.Cache[portKey, berTotals] // each port's running BER and FEC totals (ber.go)

	mu      sync.Mutex              // guards reading
	reading map[portKey]*sync.Mutex // one reader per port at a time
}

// cacheSize bounds each of the checker's caches, as the tracer's are.
const cacheSize = ttlcache.Size

type portKey struct {
	guid ibmad.GUID
	port uint8
}

type portRead struct {
	pi  ibmad.PortInfo
	err string
}

// NewChecker returns a checker on t. The walk's own PortInfo reads feed
// it (trace.Tracer.OnPortInfo): a switch's port 0 CapabilityMask, and a
// CA's ingress port, so a CA destination costs no second read. The last
// checker made on t is the one fed.
func NewChecker(t *trace.Tracer, o Options) *Checker {
	to := t.Options()
	h := &Checker{t: t, opts: o, now: to.Clock.Now,
		infos:    ttlcache.New[portKey, portRead](o.Share, cacheSize, to.Clock.Now),
		counters: ttlcache.New[counterKey, counterRead](o.Share, cacheSize, to.Clock.Now),
		prev:     ttlcache.New[portKey, counterSnap](0, cacheSize, to.Clock.Now),
		caps:     ttlcache.New[ibmad.GUID, uint32](0, cacheSize, to.Clock.Now),
		pmaCaps:  ttlcache.New[ibmad.GUID, pmaCaps](to.SupportTTL, cacheSize, to.Clock.Now),
		totals:   ttlcache.New[portKey, berTotals](0, cacheSize, to.Clock.Now),
		reading:  map[portKey]*sync.Mutex{},
	}
	t.OnPortInfo(h.notePortInfo)
	return h
}

// Options returns the checker's options.
func (h *Checker) Options() Options { return h.opts }

// notePortInfo keeps what the walk read with PortInfo modifier 0: a
// switch's CapabilityMask, a CA's ingress port.
func (h *Checker) notePortInfo(ni *ibmad.NodeInfo, pi *ibmad.PortInfo) {
	if ni.NodeType == ibmad.NodeTypeSwitch {
		h.caps.Put(ni.NodeGUID, pi.CapabilityMask)
		return
	}
	if h.opts.Share > 0 {
		h.infos.Put(portKey{ni.NodeGUID, ni.LocalPortNum}, portRead{pi: *pi})
	}
}

// lock serialises the reads of one port, so that destinations sharing
// it within Share cost one read.
func (h *Checker) lock(k portKey) func() {
	h.mu.Lock()
	m := h.reading[k]
	if m == nil {
		if len(h.reading) >= cacheSize {
			clear(h.reading)
		}
		m = new(sync.Mutex)
		h.reading[k] = m
	}
	h.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// Check reads the health of r's path: every link between consecutive hops
// (a failed trace's links as far as it got). It never fails; what it
// could not read is in the links.
func (h *Checker) Check(ctx context.Context, r *trace.Result) *PathHealth {
	p := h.t.ProbeFor(ctx, r) // the PerfMgt reads go on the SL r's trace used (counters.go)
	ph := &PathHealth{Healthy: true}
	defer func() { ph.MADs = p.MADs() }()
	if len(r.Hops) < 2 {
		return ph
	}
	n := len(r.Hops) - 1
	ph.Links = make([]Link, n)
	var wg sync.WaitGroup
	for i := 1; i <= n; i++ {
		a, b := &r.Hops[i-1], &r.Hops[i]
		l := &ph.Links[i-1]
		l.Hop = i
		l.A = LinkEnd{NodeGUID: a.NodeGUID, GUID: a.NodeGUID.String(), NodeDesc: a.NodeDesc, NodeType: a.NodeType, LID: a.LID, Port: a.OutPort}
		l.B = LinkEnd{NodeGUID: b.NodeGUID, GUID: b.NodeGUID.String(), NodeDesc: b.NodeDesc, NodeType: b.NodeType, LID: b.LID, Port: b.InPort}
		for _, e := range []struct {
			end  *LinkEnd
			path ibmad.DRPath
		}{{&l.A, a.DRPath}, {&l.B, b.DRPath}} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				h.readEnd(p, e.end, e.path)
			}()
		}
	}
	wg.Wait()
	h.sum(ph)
	return ph
}

// readEnd reads PortInfo (and the counters) of one link end.
func (h *Checker) readEnd(p *trace.Probe, e *LinkEnd, path ibmad.DRPath) {
	k := portKey{e.NodeGUID, e.Port}
	unlock := h.lock(k)
	pr, ok := h.infos.Get(k)
	if !ok || h.opts.Share <= 0 {
		pi, err := p.PortInfo(path, e.Port)
		pr = portRead{pi: pi}
		if err != nil {
			pr.err = fmt.Sprintf("PortInfo of port %d: %v", e.Port, err)
		}
		if h.opts.Share > 0 { // kept only to be shared (Options.Share)
			h.infos.Put(k, pr)
		}
	}
	unlock()
	if pr.err != "" {
		e.Err = pr.err
	} else {
		e.ok, e.pi = true, pr.pi
		e.capMask = pr.pi.CapabilityMask
		if e.NodeType == ibmad.NodeTypeSwitch {
			e.capMask = h.switchCaps(p, e.NodeGUID, path)
		}
		e.describe()
	}
	if h.opts.Counters {
		e.Counters = h.readCounters(p, e)
	}
}

// switchCaps returns a switch's port 0 CapabilityMask, which says whether
// its ports' extended speed fields are valid.
func (h *Checker) switchCaps(p *trace.Probe, guid ibmad.GUID, path ibmad.DRPath) uint32 {
	if c, ok := h.caps.Get(guid); ok {
		return c
	}
	pi, err := p.PortInfo(path, 0)
	if err != nil {
		return 0
	}
	h.caps.Put(guid, pi.CapabilityMask)
	return pi.CapabilityMask
}

// Forget drops the shared PortInfo and counter readings, keeping each
// port's last counters: the next Check reads afresh and reports the
// increments since the last reading (ibtracer --pm-interval).
func (h *Checker) Forget() {
	h.infos.DeleteFunc(func(portKey) bool { return true })
	h.counters.DeleteFunc(func(counterKey) bool { return true })
}
