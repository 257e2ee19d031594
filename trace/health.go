package trace

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// Link verdicts (docs/metrics.md, "Link health"); their values are metric
// label values and JSON strings.
const (
	LinkOK            = "ok"
	LinkNotActive     = "not_active"     // an end is not Active (or not LinkUp)
	LinkBelowExpected = "below_expected" // narrower or slower than HealthOptions expects
	LinkWidthDegraded = "width_degraded" // narrower than both ends support (iblinkinfo's "Could be")
	LinkSpeedDegraded = "speed_degraded" // slower than both ends support
	LinkUnknown       = "unknown"        // an end's PortInfo could not be read
)

// LinkVerdicts lists every link verdict, worst first.
var LinkVerdicts = []string{LinkNotActive, LinkBelowExpected, LinkWidthDegraded, LinkSpeedDegraded, LinkUnknown, LinkOK}

// HealthOptions configure HealthChecker.
type HealthOptions struct {
	// ExpectWidth (lanes: 1, 2, 4, 8, 12) and ExpectSpeed, when set, make
	// a narrower or slower link below_expected.
	ExpectWidth int
	ExpectSpeed Speed
	// Counters reads the PerfMgt counters of both ends of every link.
	Counters bool
	// Limits are per-counter limits (counter name to value): a link whose
	// counter rose by at least its limit between two readings (or, with
	// LimitValues, whose counter is at least its limit) is unhealthy.
	Limits map[string]uint64
	// LimitValues applies Limits to the counter values themselves, as
	// ibqueryerrors and ibdiagpath do, when there is no earlier reading.
	LimitValues bool
	// Share reuses a port's PortInfo and counter readings for this long
	// across the destinations whose paths cross it (the exporter sets its
	// interval): the cost is one read per distinct port per Share, however
	// many destinations cross it. 0 reads afresh every time.
	Share time.Duration
}

// LinkEnd is one end of a link.
type LinkEnd struct {
	NodeGUID ibmad.GUID     `json:"-"`
	GUID     string         `json:"node_guid"` // NodeGUID, as the hops' JSON writes it
	NodeDesc string         `json:"node_desc,omitempty"`
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

// Link is one link of a traced path: A is the egress port of hop Hop-1,
// B the ingress port of hop Hop.
type Link struct {
	Hop   int     `json:"hop"`
	A     LinkEnd `json:"a"`
	B     LinkEnd `json:"b"`
	Width int     `json:"width_lanes"`
	Speed Speed   `json:"speed"`
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
	// OverLimit lists "end:counter" whose increase (or value) reached its
	// limit.
	OverLimit []string `json:"over_limit,omitempty"`
	Healthy   bool     `json:"healthy"`
}

// Key identifies a link: both ends' node GUID and port.
func (l *Link) Key() LinkKey {
	return LinkKey{l.A.NodeGUID, l.A.Port, l.B.NodeGUID, l.B.Port}
}

// LinkKey identifies a link by its ends.
type LinkKey struct {
	AGUID ibmad.GUID
	APort uint8
	BGUID ibmad.GUID
	BPort uint8
}

// PathHealth is the health of every link of a traced path.
type PathHealth struct {
	Links         []Link  `json:"links"`
	Healthy       bool    `json:"healthy"`
	RateBits      float64 `json:"rate_bits"` // the bottleneck
	MTUBytes      int     `json:"mtu_bytes"` // the smallest NeighborMTU
	DegradedLinks int     `json:"degraded_links"`
	LinkErrors    uint64  `json:"link_errors"`
	MADs          int     `json:"mads"`
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
			s = append(s, fmt.Sprintf("link %d (%s port %d -> %s port %d): %s", l.Hop, l.A.NodeGUID, l.A.Port,
				l.B.NodeGUID, l.B.Port, what))
		}
	}
	return s
}

// HealthChecker reads the health of traced paths. It is safe for
// concurrent use; reads are shared across paths for HealthOptions.Share.
type HealthChecker struct {
	t    *Tracer
	opts HealthOptions

	infos    *ttlCache[portKey, portRead]
	counters *ttlCache[portKey, counterRead]
	prev     *ttlCache[portKey, counterSnap] // the last reading of each port, for increments
	caps     *ttlCache[ibmad.GUID, uint32]   // a switch's port 0 CapabilityMask
	pmaCaps  *ttlCache[ibmad.GUID, pmaCaps]

	mu      sync.Mutex
	reading map[portKey]*sync.Mutex // one reader per port at a time
}

type portKey struct {
	guid ibmad.GUID
	port uint8
}

type portRead struct {
	pi  ibmad.PortInfo
	err string
}

// NewHealthChecker returns a checker on t. The walk's own PortInfo reads
// of CA ports feed it (walk.follow), so a CA destination costs no second
// read.
func NewHealthChecker(t *Tracer, o HealthOptions) *HealthChecker {
	h := &HealthChecker{t: t, opts: o,
		infos:    newTTLCache[portKey, portRead](o.Share, cacheSize, t.opts.Now),
		counters: newTTLCache[portKey, counterRead](o.Share, cacheSize, t.opts.Now),
		prev:     newTTLCache[portKey, counterSnap](0, cacheSize, t.opts.Now),
		caps:     newTTLCache[ibmad.GUID, uint32](0, cacheSize, t.opts.Now),
		pmaCaps:  newTTLCache[ibmad.GUID, pmaCaps](t.opts.SupportTTL, cacheSize, t.opts.Now),
		reading:  map[portKey]*sync.Mutex{},
	}
	t.health.Store(h)
	return h
}

// Options returns the checker's options.
func (h *HealthChecker) Options() HealthOptions { return h.opts }

// notePortInfo keeps what the walk read with PortInfo modifier 0: a
// switch's CapabilityMask, a CA's ingress port (walk.go).
func (t *Tracer) notePortInfo(ni *ibmad.NodeInfo, pi *ibmad.PortInfo) {
	h := t.health.Load()
	if h == nil {
		return
	}
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
func (h *HealthChecker) lock(k portKey) func() {
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
func (h *HealthChecker) Check(ctx context.Context, r *Result) *PathHealth {
	w := h.t.newWalk(ctx, ibmad.PortAttributes{}, r.DLID)
	ph := &PathHealth{Healthy: true}
	defer func() { ph.MADs = int(w.mads.Load()) }()
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
				h.readEnd(w, e.end, e.path)
			}()
		}
	}
	wg.Wait()
	ph.MTUBytes = 0
	for i := range ph.Links {
		l := &ph.Links[i]
		h.judge(l)
		if l.Verdict != LinkOK && l.Verdict != LinkUnknown {
			ph.DegradedLinks++
		}
		if !l.Healthy {
			ph.Healthy = false
		}
		ph.LinkErrors += l.Errors
		if l.Verdict != LinkUnknown && l.Verdict != LinkNotActive {
			if ph.RateBits == 0 || l.RateBits < ph.RateBits {
				ph.RateBits = l.RateBits
			}
			if l.MTUBytes != 0 && (ph.MTUBytes == 0 || l.MTUBytes < ph.MTUBytes) {
				ph.MTUBytes = l.MTUBytes
			}
		}
	}
	return ph
}

// readEnd reads PortInfo (and the counters) of one link end.
func (h *HealthChecker) readEnd(w *walk, e *LinkEnd, path ibmad.DRPath) {
	k := portKey{e.NodeGUID, e.Port}
	unlock := h.lock(k)
	pr, ok := h.infos.Get(k)
	if !ok || h.opts.Share <= 0 {
		pi, err := w.portInfo(path, e.Port)
		pr = portRead{pi: pi}
		if err != nil {
			pr.err = fmt.Sprintf("PortInfo of port %d: %v", e.Port, err)
		}
		h.infos.Put(k, pr)
	}
	unlock()
	if pr.err != "" {
		e.Err = pr.err
	} else {
		e.ok, e.pi = true, pr.pi
		e.capMask = pr.pi.CapabilityMask
		if e.NodeType == ibmad.NodeTypeSwitch {
			e.capMask = h.switchCaps(w, e.NodeGUID, path)
		}
		e.describe()
	}
	if h.opts.Counters {
		e.Counters = h.readCounters(w, e)
	}
}

// switchCaps returns a switch's port 0 CapabilityMask, which says whether
// its ports' extended speed fields are valid.
func (h *HealthChecker) switchCaps(w *walk, guid ibmad.GUID, path ibmad.DRPath) uint32 {
	if c, ok := h.caps.Get(guid); ok {
		return c
	}
	pi, err := w.portInfo(path, 0)
	if err != nil {
		return 0
	}
	h.caps.Put(guid, pi.CapabilityMask)
	return pi.CapabilityMask
}

func (e *LinkEnd) describe() {
	pi := &e.pi
	e.State, e.PhysState = pi.PortState.String(), pi.PortPhysState.String()
	e.speeds = decodeSpeeds(pi, e.capMask)
	e.WidthActive = widthMask(pi.LinkWidthActive)
	e.WidthEnabled, e.WidthSupported = widthMask(pi.LinkWidthEnabled), widthMask(pi.LinkWidthSupported)
	e.SpeedActive = e.speeds.active
	e.SpeedEnabled = speedList(e.speeds.legacyEna, e.speeds.extEna, e.speeds.xdrEna&1 != 0)
	e.SpeedSupported = speedList(e.speeds.legacySup, e.speeds.extSup, e.speeds.xdrSup)
	e.NeighborMTU = mtuBytes(pi.NeighborMTU)
}

func (e *LinkEnd) active() bool {
	return e.pi.PortState == ibmad.PortStateActive && e.pi.PortPhysState == ibmad.PhysStateLinkUp
}

// judge gives a link its figures and verdict.
func (h *HealthChecker) judge(l *Link) {
	a, b := &l.A, &l.B
	l.Healthy = true
	h.judgeCounters(l)
	if (a.ok && !a.active()) || (b.ok && !b.active()) {
		l.Verdict, l.Healthy = LinkNotActive, false
		l.Problems = append(l.Problems, fmt.Sprintf("not active: %s/%s and %s/%s", a.State, a.PhysState, b.State, b.PhysState))
		return
	}
	if !a.ok || !b.ok {
		l.Verdict = LinkUnknown
		return
	}
	// The narrower and slower end is the link (both ends agree on a
	// healthy link).
	wa, wb := widthLanes(a.pi.LinkWidthActive), widthLanes(b.pi.LinkWidthActive)
	l.Width = min(wa, wb)
	l.Speed = min(a.speeds.active, b.speeds.active)
	l.RateBits = float64(l.Width) * l.Speed.LaneBits()
	l.MTUBytes = min(a.NeighborMTU, b.NeighborMTU)
	l.CouldBeWidth = widthLanes(widestBit(a.pi.LinkWidthSupported & b.pi.LinkWidthSupported))
	l.CouldBeSpeed = couldBeSpeed(a.speeds, b.speeds)
	l.CouldBeRateBits = float64(l.CouldBeWidth) * l.CouldBeSpeed.LaneBits()
	var verdicts []string
	if h.opts.ExpectWidth > 0 && l.Width < h.opts.ExpectWidth {
		verdicts = append(verdicts, LinkBelowExpected)
		l.Problems = append(l.Problems, fmt.Sprintf("width %dX below the expected %dX", l.Width, h.opts.ExpectWidth))
	}
	if h.opts.ExpectSpeed != SpeedUnknown && l.Speed.LaneBits() < h.opts.ExpectSpeed.LaneBits() {
		verdicts = append(verdicts, LinkBelowExpected)
		l.Problems = append(l.Problems, fmt.Sprintf("speed %s below the expected %s", l.Speed, h.opts.ExpectSpeed))
	}
	if l.CouldBeWidth != 0 && (wa != l.CouldBeWidth || wb != l.CouldBeWidth) {
		verdicts = append(verdicts, LinkWidthDegraded)
		l.Problems = append(l.Problems, fmt.Sprintf("width %dX, could be %dX", l.Width, l.CouldBeWidth))
	}
	if l.CouldBeSpeed != SpeedUnknown && (a.speeds.active != l.CouldBeSpeed || b.speeds.active != l.CouldBeSpeed) {
		verdicts = append(verdicts, LinkSpeedDegraded)
		l.Problems = append(l.Problems, fmt.Sprintf("speed %s, could be %s", l.Speed, l.CouldBeSpeed))
	}
	l.Verdict = LinkOK
	if len(verdicts) > 0 {
		l.Verdict, l.Healthy = verdicts[0], false
	}
	if len(l.OverLimit) > 0 {
		l.Healthy = false
	}
}

// Forget drops the shared PortInfo and counter readings, keeping each
// port's last counters: the next Check reads afresh and reports the
// increments since the last reading (ibtracer --pm-interval).
func (h *HealthChecker) Forget() {
	h.infos.DeleteFunc(func(portKey) bool { return true })
	h.counters.DeleteFunc(func(portKey) bool { return true })
}
