package linkhealth

import (
	"fmt"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// Link verdicts (docs/metrics.md, "Link health"); their values are metric
// label values and JSON strings.
const (
	LinkOK            = "ok"
	LinkNotActive     = "not_active"     // an end is not Active (or not LinkUp)
	LinkBelowExpected = "below_expected" // narrower or slower than Options expects
	LinkWidthDegraded = "width_degraded" // narrower than both ends support (iblinkinfo's "Could be")
	LinkSpeedDegraded = "speed_degraded" // slower than both ends support
	LinkCongested     = "congested"      // an end's transmit waited longer than Options.XmitWaitLimit (congestion.go)
	LinkUnknown       = "unknown"        // an end's PortInfo could not be read
)

// LinkVerdicts lists every link verdict, worst first. Congestion is not
// a fault of the link: congested ranks below every degradation, and a
// congested link stays healthy.
var LinkVerdicts = []string{LinkNotActive, LinkBelowExpected, LinkWidthDegraded, LinkSpeedDegraded, LinkCongested,
	LinkUnknown, LinkOK}

// Options configure Checker.
type Options struct {
	// ExpectWidth (lanes: 1, 2, 4, 8, 12) and ExpectSpeed, when set, are
	// the standard every link is judged by, as ibdiagpath -lw/-ls judge:
	// a narrower or slower link is below_expected, one as wide and fast is
	// not degraded, whatever its ends could run. Unset, a link is judged
	// by what both ends support (iblinkinfo's "could be": LinkWidthSupported
	// and LinkSpeed(Ext)Supported, not the Enabled fields).
	ExpectWidth int
	ExpectSpeed Speed
	// HostLinks and SwitchLinks override ExpectWidth and ExpectSpeed for
	// one kind of link, field by field (0: the general one): host links
	// have a CA or router at one end (a split HDR100 cable at 2X),
	// switch links a switch at both (docs/metrics.md, "Link health").
	HostLinks, SwitchLinks Expect
	// Counters reads the PerfMgt counters of both ends of every link.
	Counters bool
	// Limits are per-counter limits (counter name to value): a link whose
	// counter rose above its limit between two readings (or, with
	// LimitValues, whose counter is above its limit) is unhealthy.
	Limits map[string]uint64
	// LimitValues applies Limits to the counter values themselves, as
	// ibqueryerrors and ibdiagpath do, when there is no earlier reading.
	LimitValues bool
	// XmitWaitLimit, when above 0, makes a link congested when an end's
	// PortXmitWait rose by at least this share of the ticks between two
	// readings (docs/metrics.md, "Congestion").
	XmitWaitLimit float64
	// XmitWaitTickSymbols is the length of a PortXmitWait tick in symbol
	// times (PortSamplesControl Tick + 1; 0: DefaultXmitWaitTickSymbols).
	XmitWaitTickSymbols int
	// DataCounters reads PortCountersExtended's data counters too where
	// the PMA has the attribute but not its 64-bit error counters (as
	// ibsim's): one more MAD a port (ibtracer --pm shows them).
	DataCounters bool
	// BERTarget is the bit error rate a link may run at (0:
	// DefaultBERTarget); HostLinks.BER and SwitchLinks.BER override it
	// for one kind of link (ber.go; docs/metrics.md, "Bit error rate").
	BERTarget float64
	// Share reuses a port's PortInfo and counter readings for this long
	// across the destinations whose paths cross it (the exporter sets its
	// interval): the cost is one read per distinct port per Share, however
	// many destinations cross it. 0 reads afresh every time.
	Share time.Duration
	// MaxWindow: a port's previous reading older than this is no
	// baseline, and the reading is "first" (0: any age). The exporter
	// sets it from its intervals (collector/config, HealthOptions): its
	// increments are the last interval's (docs/metrics.md, "Link
	// health"), and errors from before a time the exporter did not read
	// the port (a destination that joined its sample, a path that moved)
	// are not judged as the link's now.
	MaxWindow time.Duration
}

// Expect is the width (lanes) and speed a kind of link is cabled for; 0
// and SpeedUnknown: not stated.
type Expect struct {
	Width int
	Speed Speed
	BER   float64 // the target bit error rate (0: the general one)
}

// Link kinds (Link.Kind).
const (
	KindHost   = "host"   // a CA or router at one end
	KindSwitch = "switch" // switches at both ends
)

// expectFor is the width and speed link l is judged by: its kind's,
// else the general ones.
func (o *Options) expectFor(l *Link) Expect {
	e := Expect{Width: o.ExpectWidth, Speed: o.ExpectSpeed}
	k := o.HostLinks
	if l.Kind == KindSwitch {
		k = o.SwitchLinks
	}
	if k.Width != 0 {
		e.Width = k.Width
	}
	if k.Speed != SpeedUnknown {
		e.Speed = k.Speed
	}
	return e
}

// LinkEnd is one end of a link.
type LinkEnd struct {
	NodeGUID ibmad.GUID `json:"-"`
	GUID     string     `json:"node_guid"` // NodeGUID, as the hops' JSON writes it
	NodeDesc string     `json:"node_desc,omitempty"`
	// NodeName is its node-name-map name (NameEnds; empty without one).
	NodeName string         `json:"node_name,omitempty"`
	NodeType ibmad.NodeType `json:"-"`
	LID      uint16         `json:"lid"`
	Port     uint8          `json:"port"`

	State          string `json:"state,omitempty"`
	PhysState      string `json:"phys_state,omitempty"`
	WidthActive    string `json:"width_active,omitempty"`
	WidthEnabled   string `json:"width_enabled,omitempty"`
	WidthSupported string `json:"width_supported,omitempty"`
	SpeedActive    Speed  `json:"speed_active"`
	SpeedEnabled   string `json:"speed_enabled,omitempty"`
	SpeedSupported string `json:"speed_supported,omitempty"`
	NeighborMTU    int    `json:"neighbor_mtu_bytes,omitempty"`
	// Err says why PortInfo could not be read.
	Err string `json:"error,omitempty"`

	Counters *PortCounterReading `json:"counters,omitempty"`

	pi      ibmad.PortInfo
	speeds  portSpeeds
	capMask uint32
	ok      bool
}

// Label is the end's node for a person: its node-name-map name, else its
// description, then its GUID (trace.NodeLabel).
func (e *LinkEnd) Label() string { return trace.NodeLabel(e.NodeName, e.NodeDesc, e.NodeGUID) }

// NameEnds gives every link end of ph its node-name-map name, name(node
// GUID) ("" for none); a nil name or ph names nothing. The hops are
// named after the check (trace.NameHops), so the ends are named here.
func (p *PathHealth) NameEnds(name func(guid uint64) string) {
	if p == nil || name == nil {
		return
	}
	for i := range p.Links {
		for _, e := range []*LinkEnd{&p.Links[i].A, &p.Links[i].B} {
			e.NodeName = name(uint64(e.NodeGUID))
		}
	}
}

// Link is one link of a traced path: A is the egress port of hop Hop-1,
// B the ingress port of hop Hop.
type Link struct {
	Hop int     `json:"hop"`
	A   LinkEnd `json:"a"`
	B   LinkEnd `json:"b"`
	// Kind is host (a CA or router at an end) or switch (switches at
	// both); ExpectWidth and ExpectSpeed what it was judged by (0, and
	// absent: the "could be" comparison).
	Kind        string `json:"kind"`
	ExpectWidth int    `json:"expect_width_lanes,omitempty"`
	ExpectSpeed Speed  `json:"expect_speed,omitempty"`
	Width       int    `json:"width_lanes"`
	Speed       Speed  `json:"speed"`
	// RateBits is width × lane rate; CouldBeRateBits what both ends
	// support (iblinkinfo's "Could be").
	RateBits        float64  `json:"rate_bits"`
	CouldBeWidth    int      `json:"could_be_width_lanes"`
	CouldBeSpeed    Speed    `json:"could_be_speed"`
	CouldBeRateBits float64  `json:"could_be_rate_bits"`
	MTUBytes        int      `json:"mtu_bytes"`
	Verdict         string   `json:"verdict"`
	Problems        []string `json:"problems,omitempty"`
	// Errors is the error counters' increase at both ends since the
	// previous reading (PortXmitWait, a congestion measure, excluded);
	// ErrorsKnown is false without two comparable readings.
	Errors      uint64 `json:"errors"`
	ErrorsKnown bool   `json:"errors_known"`
	XmitWait    uint64 `json:"xmit_wait"`
	// XmitWaitRatio is the larger of the two ends' PortXmitWait increments
	// as a share of the ticks between their readings; XmitWaitEnd ("a" or
	// "b") the end that waited, XmitWaitVL the VL that waited most there
	// (nil: not read, or the PMA lacks PortVLXmitWaitCounters). All are
	// unset while no end's ratio is known. XmitWaitKnown is false while
	// an end's is unknown (no speed, no two comparable readings, no
	// PortXmitWait at its PMA, or the counter stuck at its maximum): the
	// ratio is then the other end's, a lower bound (congestion.go).
	XmitWaitRatio float64 `json:"xmit_wait_ratio"`
	XmitWaitKnown bool    `json:"xmit_wait_known"`
	XmitWaitEnd   string  `json:"xmit_wait_end,omitempty"`
	XmitWaitVL    *int    `json:"xmit_wait_vl,omitempty"`
	// Congested: XmitWaitRatio reached Options.XmitWaitLimit (the verdict
	// says congested unless a degradation ranks first).
	Congested bool `json:"congested"`
	// OverLimit lists "end:counter" whose increase (or value) reached its
	// limit.
	OverLimit []string `json:"over_limit,omitempty"`
	// BERState is the worse end's BER state (ok, above_target,
	// not_yet_known; empty: no counters read), BER and BERWindowSeconds
	// its rate and window, BEREnd ("a" or "b") that end; BERTarget the
	// link's target (ber.go).
	BERState         string  `json:"ber_state,omitempty"`
	BER              float64 `json:"ber"`
	BERWindowSeconds float64 `json:"ber_window_seconds,omitempty"`
	BEREnd           string  `json:"ber_end,omitempty"`
	BERTarget        float64 `json:"ber_target,omitempty"`
	Healthy          bool    `json:"healthy"`
}

// PathHealth is the health of every link of a traced path.
type PathHealth struct {
	Links         []Link  `json:"links"`
	Healthy       bool    `json:"healthy"`
	RateBits      float64 `json:"rate_bits"` // the bottleneck
	MTUBytes      int     `json:"mtu_bytes"` // the smallest NeighborMTU
	DegradedLinks int     `json:"degraded_links"`
	LinkErrors    uint64  `json:"link_errors"`
	// CongestedLinks counts the congested links; XmitWaitRatio is the
	// largest link XmitWaitRatio on the path and XmitWaitHop that link's
	// Hop (0: no link's ratio is known).
	CongestedLinks int     `json:"congested_links"`
	XmitWaitRatio  float64 `json:"xmit_wait_ratio"`
	XmitWaitHop    int     `json:"xmit_wait_hop,omitempty"`
	MADs           int     `json:"mads"`
}

// Unhealthy lists the links that are not healthy, for a person.
func (p *PathHealth) Unhealthy() []string {
	var s []string
	for _, l := range p.Links {
		if !l.Healthy {
			what := l.Verdict
			if len(l.OverLimit) > 0 {
				what += fmt.Sprintf(", over limit: %v", l.OverLimit)
			}
			s = append(s, fmt.Sprintf("link %d (%s port %d -> %s port %d): %s", l.Hop, l.A.Label(), l.A.Port,
				l.B.Label(), l.B.Port, what))
		}
	}
	return s
}
