package trace

import (
	"fmt"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// Cache lifetimes when Options leave them unset (docs/architecture.md,
// "Options: one meaning per knob").
const (
	DefaultSupportTTL  = 10 * time.Minute
	DefaultResolveTTL  = time.Minute
	DefaultSARecordTTL = 10 * time.Second
)

// Options configure a Tracer. Every field means one thing: its zero value
// is the default that field names, and "none" is said explicitly (a
// count or a lifetime of 0, ValidateOff), never by a sign.
type Options struct {
	// Timeout per MAD attempt (per hop); 0: the engine's
	// (ibmad.Options.Timeout).
	Timeout time.Duration
	// Retries is how many times a MAD that gets no answer is sent again;
	// nil: the engine's (ibmad.Options.Retries); 0: every MAD is sent
	// once. A negative count is 0.
	Retries *int
	// OUI of the ibtracer vendor class; default 0x001405.
	OUI ibmad.OUI
	// SL of the validation MADs (vendor and SMA): the zero SL is 0 for a
	// LID destination and the PathRecord's for a GID, GUID or node
	// destination; DefaultSL(n) is n for a LID destination, FixedSL(n)
	// is n for every destination (--sl, sl:; addressing.go).
	SL SL
	// SupportTTL is how long a node's explicit answer to ClassPortInfo
	// (an agent, or "no such class") is trusted; 0: DefaultSupportTTL.
	// It cannot be turned off: 0 or less takes the default. A request
	// that goes unanswered is not remembered.
	SupportTTL time.Duration
	// ResolveTTL is how long an SA resolution of a GID, GUID or node name
	// is reused; nil: DefaultResolveTTL; 0: never (the SA is asked every
	// trace).
	ResolveTTL *time.Duration
	// Validate says who validates the hops: auto (the zero value), agent,
	// sma or off (a plain ibtracert-style walk, which asks no agent).
	Validate ValidateMode
	// NoFastPath always walks.
	NoFastPath bool
	// ShareValidation reuses, for this long, a hop's validated verdict
	// for every destination whose path crosses it: the validation MAD is
	// addressed to the hop's own LID, so it does not depend on the
	// destination. 0 (the default) shares nothing. The exporter sets it,
	// so that a leaf on every path is not asked once per destination.
	ShareValidation time.Duration
	// Discovery is how traces learn the path: auto (the zero value), smp
	// or sa.
	Discovery Discovery
	// SARecordTTL is how long SA-mode walks share an SA record (LFT
	// block, link, node, port) across destinations; nil:
	// DefaultSARecordTTL; 0: not at all (every trace asks again).
	SARecordTTL *time.Duration
	// ShareFacts is how long the answers of the walk's directed-route
	// SMPs (a node's NodeInfo, PortInfo and description, a switch's
	// SwitchInfo and LFT blocks) serve every trace: each is asked once,
	// whichever destination needs it first, and concurrent walks wait for
	// an answer in flight (facts.go). ibtracer sets it for the run. 0
	// (the default) shares nothing beyond the caches above.
	ShareFacts time.Duration
	// Clock is the clock the caches expire by; nil: the wall clock. (A
	// Result's Start and Duration always use the real clock.) The one
	// clock type of the module (docs/architecture.md, "One clock").
	Clock ibmad.Clock
	// Log, when set, is told the tracer's rare events as key-value pairs:
	// the local port's LID changed (warn), a destination's cached LID led
	// to another port and was resolved again. nil: none.
	Log func(warn bool, keyvals ...any)
}

// SL is the SL of a tracer's validation MADs: its zero value is 0 for a
// LID destination and the PathRecord's for the others.
type SL struct {
	sl    uint8
	fixed bool
}

// DefaultSL is sl for a LID destination, which has no PathRecord, and
// the PathRecord's for the others.
func DefaultSL(sl uint8) SL { return SL{sl: sl} }

// FixedSL is sl for every destination: it wins over a PathRecord's.
func FixedSL(sl uint8) SL { return SL{sl: sl, fixed: true} }

// Value is the SL of a LID destination.
func (s SL) Value() uint8 { return s.sl }

// Fixed says whether the SL wins over a PathRecord's.
func (s SL) Fixed() bool { return s.fixed }

// ValidateMode says who validates a trace's hops (docs/architecture.md,
// "The life of a trace", step 5; docs/protocol.md, "Validation by the
// SMA"). The zero ValidateMode is ValidateAuto.
type ValidateMode string

// Validation modes; their values are ibtracer's --validate values and
// the exporter's validate: key.
const (
	// ValidateAuto asks our vendor agent where one answers and the node's
	// own SMA (a LID-routed Get(NodeInfo)) everywhere else: a hop whose
	// agent is missing ("no such class") or does not answer.
	ValidateAuto ValidateMode = "auto"
	// ValidateAgent asks only our vendor agent.
	ValidateAgent ValidateMode = "agent"
	// ValidateSMA asks only the SMAs: no vendor MAD is sent.
	ValidateSMA ValidateMode = "sma"
	// ValidateOff asks nobody: a plain ibtracert-style walk.
	ValidateOff ValidateMode = "off"
)

// ParseValidate is the one reading of a validation mode: "" is the zero
// value, auto.
func ParseValidate(s string) (ValidateMode, error) {
	switch ValidateMode(s) {
	case "":
		return ValidateAuto, nil
	case ValidateAuto, ValidateAgent, ValidateSMA, ValidateOff:
		return ValidateMode(s), nil
	}
	return "", fmt.Errorf("validate %q: want auto, agent, sma or off", s)
}

// Discovery is how a trace learns the path (docs/architecture.md,
// "SA-only discovery"). The zero Discovery is DiscoveryAuto.
type Discovery string

// Discovery modes; their values are ibtracer's --discovery values, the
// exporter's discovery: key, the JSON "discovery" field and the
// ibtracer_discovery_mode label (smp and sa: how a path was learnt).
const (
	// DiscoverySMP walks with directed-route SMPs.
	DiscoverySMP Discovery = "smp"
	// DiscoverySA reads the path from SA records only: for fabrics where
	// only the SM may send SMPs (M_Key protection, HCA SMP firewalls).
	DiscoverySA Discovery = "sa"
	// DiscoveryAuto walks with SMPs and falls back to the SA when the
	// SMPs are refused at the first hop (no answer, or an error status,
	// from the local node, or from a neighbour that is alive). A fallback
	// that traced is remembered for Options.SupportTTL: until then traces
	// go to the SA directly, then SMPs are tried again.
	DiscoveryAuto Discovery = "auto"
)

// ParseDiscovery is the one reading of a discovery mode: "" is the zero
// value, auto.
func ParseDiscovery(s string) (Discovery, error) {
	switch Discovery(s) {
	case "", DiscoveryAuto:
		return DiscoveryAuto, nil
	case DiscoverySMP, DiscoverySA:
		return Discovery(s), nil
	}
	return "", fmt.Errorf("discovery %q: want smp, sa or auto", s)
}

// withDefaults returns o with every zero value replaced by its default:
// the one place the defaults above are applied. An unknown validation or
// discovery mode is auto: callers parse with ParseValidate and
// ParseDiscovery.
func (o Options) withDefaults() Options {
	if o.OUI == 0 {
		o.OUI = ibmad.OUIOpenIB
	}
	if o.Retries != nil && *o.Retries < 0 {
		o.Retries = new(0)
	}
	if o.SupportTTL <= 0 {
		o.SupportTTL = DefaultSupportTTL
	}
	if o.ResolveTTL == nil {
		o.ResolveTTL = new(DefaultResolveTTL)
	}
	if o.SARecordTTL == nil {
		o.SARecordTTL = new(DefaultSARecordTTL)
	}
	if v, err := ParseValidate(string(o.Validate)); err == nil {
		o.Validate = v
	} else {
		o.Validate = ValidateAuto
	}
	if d, err := ParseDiscovery(string(o.Discovery)); err == nil {
		o.Discovery = d
	} else {
		o.Discovery = DiscoveryAuto
	}
	o.Clock = ibmad.ClockOr(o.Clock)
	return o
}

// validates says whether the hops are validated at all.
func (o *Options) validates() bool { return o.Validate != ValidateOff }

// requestRetries is Retries as an ibmad.Request takes it: a count (0:
// the engine's), or none.
func (o *Options) requestRetries() (retries int, none bool) {
	switch {
	case o.Retries == nil:
		return 0, false
	case *o.Retries == 0:
		return 0, true
	}
	return *o.Retries, false
}

// attempts is how many MADs a request that is never answered costs.
func (o *Options) attempts() int {
	if o.Retries == nil {
		return ibmad.DefaultRetries + 1
	}
	return *o.Retries + 1
}
