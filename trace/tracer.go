package trace

import (
	"sync/atomic"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// Options configure a Tracer.
type Options struct {
	// Timeout and Retries per MAD (per hop); zero values take the
	// engine's.
	Timeout time.Duration
	Retries int
	// OUI of the ibtracer vendor class; default 0x001405.
	OUI ibmad.OUI
	// SL for LID-routed GMPs (vendor and SA).
	SL uint8
	// SupportTTL is how long a node's explicit answer to ClassPortInfo
	// (an agent, or "no such class") is trusted; default 10 minutes. A
	// request that goes unanswered is not remembered.
	SupportTTL time.Duration
	// ResolveTTL is how long an SA resolution of a GID, GUID or node name
	// is reused; default 1 minute. Negative disables the cache.
	ResolveTTL time.Duration
	// NoValidate skips the agents: a plain ibtracert-style walk.
	NoValidate bool
	// NoFastPath always walks.
	NoFastPath bool
	// ShareValidation reuses, for this long, a hop's validated verdict
	// for every destination whose path crosses it: the validation MAD is
	// addressed to the hop's own LID, so it does not depend on the
	// destination. 0 turns sharing off. The exporter sets it, so that a
	// leaf on every path is not asked once per destination.
	ShareValidation time.Duration
	// Discovery is how traces learn the path (discovery.go); "" is smp.
	Discovery Discovery
	// SARecordTTL is how long SA-mode walks share an SA record (LFT
	// block, link, node, port) across destinations; default 10 s,
	// negative: not at all (every trace asks again).
	SARecordTTL time.Duration
	// Now is the clock the caches expire by; default time.Now. (A
	// Result's Start and Duration always use the real clock.)
	Now func() time.Time
	// Log, when set, is told the tracer's rare events as key-value pairs
	// (reached.go): the local port's LID changed (warn), a destination's
	// cached LID led to another port and was resolved again. nil: none.
	Log func(warn bool, keyvals ...any)
}

// Tracer traces destinations through one engine. It is safe for
// concurrent use; traces share its caches (caches.go).
type Tracer struct {
	e    *ibmad.Engine
	opts Options
	caches
	*saState // SA-only discovery (discovery.go)

	resolved *ttlCache[Destination, resolvedEntry] // SA resolutions, for Options.ResolveTTL
	health   atomic.Pointer[portInfoHook]          // the link health is told the walk's PortInfo reads (probe.go)
	localLID atomic.Uint32                         // the local port's LID the last trace saw (reached.go)
}

type resolvedEntry struct {
	dlid uint16
	port uint8
	want identity // the port the destination names (reached.go)
}

// New returns a Tracer on e.
func New(e *ibmad.Engine, o Options) *Tracer {
	if o.OUI == 0 {
		o.OUI = ibmad.OUIOpenIB
	}
	if o.SupportTTL <= 0 {
		o.SupportTTL = 10 * time.Minute
	}
	if o.ResolveTTL == 0 {
		o.ResolveTTL = time.Minute
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Tracer{e: e, opts: o, caches: newCaches(o), saState: newSAState(o),
		resolved: newTTLCache[Destination, resolvedEntry](o.ResolveTTL, cacheSize, o.Now)}
}

// Engine returns the tracer's engine.
func (t *Tracer) Engine() *ibmad.Engine { return t.e }
