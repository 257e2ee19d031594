package trace

import (
	"sync/atomic"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// Off, as a cache lifetime of Options (ResolveTTL, ShareValidation,
// SARecordTTL), keeps nothing: every trace asks again. Any negative
// duration means the same.
const Off time.Duration = -1

// Cache lifetimes when Options leave them 0 (docs/architecture.md,
// "Options: one meaning per knob").
const (
	DefaultSupportTTL  = 10 * time.Minute
	DefaultResolveTTL  = time.Minute
	DefaultSARecordTTL = 10 * time.Second
)

// Options configure a Tracer. Every field means one thing: a zero value
// takes the default that field names, and "none" is said explicitly
// (NoRetry, Off), never by a sign.
type Options struct {
	// Timeout per MAD attempt (per hop); 0: the engine's
	// (ibmad.Options.Timeout).
	Timeout time.Duration
	// Retries is how many times a MAD that gets no answer is sent again;
	// 0: the engine's (ibmad.Options.Retries). A negative count is taken
	// as 0. NoRetry sends every MAD once, whatever Retries says.
	Retries int
	NoRetry bool
	// OUI of the ibtracer vendor class; default 0x001405.
	OUI ibmad.OUI
	// SL of the validation MADs (vendor and SMA) of a LID destination;
	// a GID, GUID or node destination's come from its PathRecord unless
	// SLFixed (addressing.go).
	SL uint8
	// SLFixed: SL was given (--sl, sl:) and wins over a PathRecord's.
	SLFixed bool
	// SupportTTL is how long a node's explicit answer to ClassPortInfo
	// (an agent, or "no such class") is trusted; 0: DefaultSupportTTL.
	// It cannot be Off: 0 or less takes the default. A request that
	// goes unanswered is not remembered.
	SupportTTL time.Duration
	// ResolveTTL is how long an SA resolution of a GID, GUID or node name
	// is reused; 0: DefaultResolveTTL; Off: never (the SA is asked every
	// trace).
	ResolveTTL time.Duration
	// NoValidate skips the agents: a plain ibtracert-style walk. It is
	// Validate: ValidateOff, and wins over Validate.
	NoValidate bool
	// Validate says who validates the hops (sma.go): auto, agent, sma or
	// off. "" is agent, what the exporter runs until its `validate:` key
	// sets this; the ibtracer command defaults to auto.
	Validate ValidateMode
	// NoFastPath always walks.
	NoFastPath bool
	// ShareValidation reuses, for this long, a hop's validated verdict
	// for every destination whose path crosses it: the validation MAD is
	// addressed to the hop's own LID, so it does not depend on the
	// destination. 0 (the default) and Off share nothing. The exporter
	// sets it, so that a leaf on every path is not asked once per
	// destination.
	ShareValidation time.Duration
	// Discovery is how traces learn the path (discovery.go); "" is smp.
	Discovery Discovery
	// SARecordTTL is how long SA-mode walks share an SA record (LFT
	// block, link, node, port) across destinations; 0:
	// DefaultSARecordTTL; Off: not at all (every trace asks again).
	SARecordTTL time.Duration
	// ShareFacts is how long the answers of the walk's directed-route
	// SMPs (a node's NodeInfo, PortInfo and description, a switch's
	// SwitchInfo and LFT blocks) serve every trace: each is asked once,
	// whichever destination needs it first, and concurrent walks wait for
	// an answer in flight (facts.go). ibtracer sets it for the run. 0
	// (the default) and Off share nothing beyond the caches above.
	ShareFacts time.Duration
	// Clock is the clock the caches expire by; nil: the wall clock. (A
	// Result's Start and Duration always use the real clock.) The one
	// clock type of the module (docs/architecture.md, "One clock").
	Clock ibmad.Clock
	// Log, when set, is told the tracer's rare events as key-value pairs
	// (reached.go): the local port's LID changed (warn), a destination's
	// cached LID led to another port and was resolved again. nil: none.
	Log func(warn bool, keyvals ...any)
}

// withDefaults returns o with every zero value replaced by its default:
// the one place the defaults above are applied.
func (o Options) withDefaults() Options {
	if o.OUI == 0 {
		o.OUI = ibmad.OUIOpenIB
	}
	if o.Retries < 0 {
		o.Retries = 0
	}
	if o.SupportTTL <= 0 {
		o.SupportTTL = DefaultSupportTTL
	}
	if o.ResolveTTL == 0 {
		o.ResolveTTL = DefaultResolveTTL
	}
	if o.SARecordTTL == 0 {
		o.SARecordTTL = DefaultSARecordTTL
	}
	o.Clock = ibmad.ClockOr(o.Clock)
	return o
}

// attempts is how many MADs a request that is never answered costs.
func (o *Options) attempts() int {
	switch {
	case o.NoRetry:
		return 1
	case o.Retries == 0:
		return ibmad.DefaultRetries + 1
	}
	return o.Retries + 1
}

// Tracer traces destinations through one engine. It is safe for
// concurrent use; traces share its caches (caches.go).
type Tracer struct {
	e    *ibmad.Engine
	opts Options
	caches
	facts *facts // shared SMP answers, for Options.ShareFacts (facts.go)
	// the validation questions in flight, one per verdict and per node's
	// agent support (flights.go)
	verdictFlights flights[verdictKey]
	supportFlights flights[ibmad.GUID]
	*saState       // SA-only discovery (discovery.go)

	resolved *ttlCache[Destination, resolvedEntry] // SA resolutions, for Options.ResolveTTL
	health   atomic.Pointer[portInfoHook]          // the link health is told the walk's PortInfo reads (probe.go)
	localLID atomic.Uint32                         // the local port's LID the last trace saw (reached.go)
}

type resolvedEntry struct {
	dlid uint16
	port uint8
	want identity          // the port the destination names (reached.go)
	pr   *ibmad.PathRecord // its PathRecord: SL and GRH (addressing.go); nil for a LID
	// remote: a GID of another subnet, reached through a router (subnet.go).
	remote *remoteEntry
}

// New returns a Tracer on e.
func New(e *ibmad.Engine, o Options) *Tracer {
	o = o.withDefaults().withValidate() // sma.go
	return &Tracer{e: e, opts: o, caches: newCaches(o), facts: newFacts(o), saState: newSAState(o),
		resolved: newTTLCache[Destination, resolvedEntry](o.ResolveTTL, cacheSize, o.Clock.Now)}
}

// Engine returns the tracer's engine.
func (t *Tracer) Engine() *ibmad.Engine { return t.e }
