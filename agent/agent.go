package agent

import (
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// Config configures an Agent.
type Config struct {
	// OUI of the ibtracer class; default 0x001405 (OpenIB).
	OUI ibmad.OUI
	// RatePerSource limits the requests answered per requester
	// (ibmad.RequesterOf: its LID in our subnet, with a GRH or without;
	// its GID without a LID or beyond a router) per second (a token
	// bucket of Burst, in whole requests: a fraction is dropped); 0
	// means 200/s, burst 400. The engine's reply queue, not the burst,
	// keeps one requester's replies from crowding out another's
	// (docs/protocol.md, "What the agent answers").
	RatePerSource float64
	Burst         float64
	// Ping serves ibping (class 0x32) as well.
	Ping bool
	// PingOUI is ibping's OUI; default 0x001405.
	PingOUI ibmad.OUI
	// Hostname answered to ibping; default as ibping -S builds it:
	// hostname + "." + domainname, or the hostname alone.
	Hostname string
	// Clock is the time source of the rate limit and of SourceRoute's
	// RecvTimeUnixNs (nil: the wall clock); tests give a fake one.
	Clock ibmad.Clock
	// Log, if set, is told when a requester goes over its rate limit
	// and when it is back within it, with how many of its requests were
	// dropped meanwhile.
	Log func(msg string, keyvals ...any)
}

// Results of a request, used as metric label values.
const (
	ResultOK                = "ok"
	ResultMismatch          = "mismatch"           // status 7: ingress differs from the expected port
	ResultBadHopCount       = "bad_hop_count"      // status 7: HopCount 0 or > 64
	ResultUnsupportedAttr   = "unsupported_attr"   // 0x000C
	ResultUnsupportedMethod = "unsupported_method" // 0x0008
)

// Drop reasons.
const (
	DropRateLimited = "rate_limited"
	DropMalformed   = "malformed"
)

// Agent serves the ibtracer class (and ibping) on one engine.
type Agent struct {
	e   *ibmad.Engine
	cfg Config
	now func() time.Time // cfg.Clock's

	limMu   sync.Mutex
	buckets map[ibmad.Requester]*bucket

	mu       sync.Mutex
	requests map[[2]string]uint64 // (attribute, result) -> count
	drops    map[string]uint64
	pings    atomic.Uint64
}

// DefaultHostname returns what ibping -S answers with.
func DefaultHostname() string {
	h, _ := os.Hostname()
	d, err := os.ReadFile("/proc/sys/kernel/domainname")
	if dom := strings.TrimSpace(string(d)); err == nil && dom != "" {
		// Linux's getdomainname returns "(none)" when unset, and ibping
		// appends it anyway (docs/protocol.md, "ibping").
		return h + "." + dom
	}
	return h
}

// New registers the agent's handlers on e.
func New(e *ibmad.Engine, cfg Config) (*Agent, error) {
	if cfg.OUI == 0 {
		cfg.OUI = ibmad.OUIOpenIB
	}
	if cfg.PingOUI == 0 {
		cfg.PingOUI = ibmad.OUIOpenIB
	}
	if cfg.RatePerSource <= 0 {
		cfg.RatePerSource = 200
	}
	if cfg.Burst <= 0 {
		cfg.Burst = 2 * cfg.RatePerSource
	}
	if cfg.Hostname == "" {
		cfg.Hostname = DefaultHostname()
	}
	a := &Agent{e: e, cfg: cfg, now: ibmad.ClockOr(cfg.Clock).Now, buckets: map[ibmad.Requester]*bucket{}, requests: map[[2]string]uint64{}, drops: map[string]uint64{}}
	if _, err := e.Port(); err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	// Get is the protocol; Set is registered only to be refused with
	// "method not supported", as the design asks.
	if err := e.Handle(ibmad.ClassIBTracer, 1, cfg.OUI, []ibmad.Method{ibmad.MethodGet, ibmad.MethodSet}, false, a.serve); err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	if cfg.Ping {
		if err := e.Handle(ibmad.ClassOpenIBPing, 1, cfg.PingOUI, []ibmad.Method{ibmad.MethodGet, ibmad.MethodSet}, false, a.ping); err != nil {
			return nil, fmt.Errorf("agent: ibping responder: %w", err)
		}
	}
	return a, nil
}

// Close stops answering: requests that still arrive are dropped by the
// engine and counted there.
func (a *Agent) Close() {
	a.e.Unhandle(ibmad.ClassIBTracer, 1, a.cfg.OUI)
	if a.cfg.Ping {
		a.e.Unhandle(ibmad.ClassOpenIBPing, 1, a.cfg.PingOUI)
	}
}

// maxSources bounds the per-requester buckets: past it they all start
// again full (bounded memory against a flood of forged GIDs).
const maxSources = 65536

// bucket is one requester's rate limit, and how many of its requests were
// dropped since it went over it (0: it is within it).
type bucket struct {
	lim     *rate.Limiter
	dropped uint64
}

// allow takes a token from the bucket of the requester of a request from
// addr (ibmad.RequesterOf: one bucket however it addresses us), made full
// on its first request. The log hears when a requester goes over its
// limit and when it is back within it.
func (a *Agent) allow(from ibmad.Address) bool {
	port, _ := a.e.CachedPort() // the subnet prefix; never the transport (receive goroutine)
	who := ibmad.RequesterOf(from, port.GIDPrefix)
	a.limMu.Lock()
	b := a.buckets[who]
	if b == nil {
		if len(a.buckets) > maxSources {
			a.buckets = map[ibmad.Requester]*bucket{} // bounded memory
		}
		b = &bucket{lim: rate.NewLimiter(rate.Limit(a.cfg.RatePerSource), int(min(a.cfg.Burst, math.MaxInt32)))}
		a.buckets[who] = b
	}
	ok := b.lim.AllowN(a.now(), 1)
	dropped := b.dropped
	if ok {
		b.dropped = 0
	} else {
		b.dropped++
	}
	a.limMu.Unlock()
	switch {
	case a.cfg.Log == nil:
	case !ok && dropped == 0:
		a.cfg.Log("requester over the agent's rate limit: dropping its requests", "requester", who.String(),
			"rate_per_source", a.cfg.RatePerSource, "burst", a.cfg.Burst, "counted_in", `ibtracer_agent_dropped_total{reason="rate_limited"}`)
	case ok && dropped > 0:
		a.cfg.Log("requester back within the agent's rate limit", "requester", who.String(), "dropped", dropped)
	}
	return ok
}

func (a *Agent) count(attr, result string) {
	a.mu.Lock()
	a.requests[[2]string{attr, result}]++
	a.mu.Unlock()
}

func (a *Agent) drop(reason string) {
	a.mu.Lock()
	a.drops[reason]++
	a.mu.Unlock()
}

// respond prepares resp as the answer to req with status st.
func respond(req, resp *ibmad.Packet, st ibmad.Status) {
	resp.MAD = req.MAD
	resp.MAD.SetMethod(ibmad.MethodGetResp)
	resp.MAD.SetStatus(st)
	clear(resp.MAD[24:32]) // RMPP header unused
	resp.Addr = ibmad.Address{LID: req.Addr.LID, QPN: req.Addr.QPN, QKey: ibmad.QP1QKey, SL: req.Addr.SL,
		PKeyIndex: req.Addr.PKeyIndex, GRHPresent: req.Addr.GRHPresent, GID: req.Addr.GID,
		HopLimit: req.Addr.HopLimit, TClass: req.Addr.TClass, FlowLabel: req.Addr.FlowLabel, GIDIndex: req.Addr.GIDIndex}
	if resp.Addr.QPN == 0 {
		resp.Addr.QPN = ibmad.QP1
	}
}

// serve answers one ibtracer-class request.
func (a *Agent) serve(req, resp *ibmad.Packet) bool {
	m := &req.MAD
	if m.BaseVersion() != 1 || m.ClassVersion() != 1 {
		a.drop(DropMalformed)
		return false
	}
	if !a.allow(req.Addr) {
		a.drop(DropRateLimited)
		return false
	}
	attr := "unknown"
	switch m.AttrID() {
	case ibmad.AttrClassPortInfo:
		attr = "ClassPortInfo"
	case ibmad.AttrSourceRoute:
		attr = "SourceRoute"
	}
	if m.Method() != ibmad.MethodGet {
		respond(req, resp, ibmad.StatusMethodUnsupported)
		a.count(attr, ResultUnsupportedMethod)
		return true
	}
	switch m.AttrID() {
	case ibmad.AttrClassPortInfo:
		respond(req, resp, ibmad.StatusOK)
		data := resp.MAD.VendorData()
		clear(data)
		cpi := ibmad.ClassPortInfo{BaseVersion: 1, ClassVersion: 1, RespTimeValue: 18}
		_ = cpi.MarshalTo(data)
		a.count(attr, ResultOK)
	case ibmad.AttrSourceRoute:
		a.sourceRoute(req, resp)
	default:
		respond(req, resp, ibmad.StatusMethodAttrUnsupp)
		a.count(attr, ResultUnsupportedAttr)
	}
	return true
}

// sourceRoute fills in the ingress port and our identity, and answers
// status 7 when the ingress port is known and differs from the expected
// one, or the hop count is out of range (docs/protocol.md, "Statuses").
func (a *Agent) sourceRoute(req, resp *ibmad.Packet) {
	var sr ibmad.SourceRoute
	if err := sr.UnmarshalBinary(req.MAD.VendorData()); err != nil {
		a.drop(DropMalformed)
		respond(req, resp, ibmad.StatusInvalidField)
		return
	}
	port, _ := a.e.CachedPort() // never the transport: this runs on the receive goroutine
	now := a.now()
	sr.ExtVersion = ibmad.SourceRouteExtVersion
	sr.Flags = 0
	sr.ActualInPort = 0
	if req.InPortKnown {
		sr.Flags |= ibmad.SRFlagIngressKnown
		sr.ActualInPort = req.InPort
	}
	if port.NodeType == ibmad.NodeTypeSwitch {
		sr.Flags |= ibmad.SRFlagSwitch
	}
	sr.NodeGUID = port.NodeGUID
	sr.PortGUID = port.PortGUID
	sr.BaseLID = port.LID
	sr.RecvTimeUnixNs = uint64(now.UnixNano())
	sr.NodeDescription = ibmad.NewNodeDescription(port.NodeDesc)
	st, result := ibmad.StatusOK, ResultOK
	if expected, ok := sr.ExpectedInPort(); !ok {
		st, result = ibmad.StatusInvalidField, ResultBadHopCount
	} else if req.InPortKnown && expected != req.InPort {
		st, result = ibmad.StatusInvalidField, ResultMismatch
	}
	respond(req, resp, st)
	data := resp.MAD.VendorData()
	clear(data)
	_ = sr.MarshalTo(data)
	a.count("SourceRoute", result)
}

// ping answers ibping as `ibping -S` does: GetResp (a Set too) with the
// host name in the 216 data bytes, same TID, attribute and OUI.
func (a *Agent) ping(req, resp *ibmad.Packet) bool {
	if !a.allow(req.Addr) {
		a.drop(DropRateLimited)
		return false
	}
	respond(req, resp, ibmad.StatusOK)
	data := resp.MAD.VendorData()
	clear(data)
	copy(data[:len(data)-1], a.cfg.Hostname)
	a.pings.Add(1)
	return true
}

// Stats is a snapshot of the agent's counters.
type Stats struct {
	Requests map[[2]string]uint64 // (attribute, result)
	Drops    map[string]uint64
	Pings    uint64
}

// Stats returns the counters.
func (a *Agent) Stats() Stats {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := Stats{Requests: map[[2]string]uint64{}, Drops: map[string]uint64{}, Pings: a.pings.Load()}
	for k, v := range a.requests {
		s.Requests[k] = v
	}
	for k, v := range a.drops {
		s.Drops[k] = v
	}
	return s
}
