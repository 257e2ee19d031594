package trace

import (
	"context"
	"errors"
	"fmt"
	"sync"
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
	// SupportTTL is how long a node's answer to ClassPortInfo (agent or
	// not) is trusted; default 10 minutes.
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
}

// Tracer traces destinations through one engine. It is safe for
// concurrent use; traces share its caches of node descriptions, switch
// tables' sizes, agent support and confirmed paths.
type Tracer struct {
	e    *ibmad.Engine
	opts Options

	mu       sync.Mutex
	desc     map[ibmad.GUID]string
	top      map[ibmad.GUID]uint16 // SwitchInfo.LinearFDBTop
	support  map[ibmad.GUID]supportEntry
	paths    map[uint16]*cachedPath
	resolved map[Destination]resolvedEntry
	verdicts map[verdictKey]verdictEntry
	blocks   map[lftKey]blockEntry // LFT blocks the fast path shares
}

type blockEntry struct {
	block   ibmad.LFTBlock
	expires time.Time
}

// verdictKey identifies a validation: the node, the LID asked and the
// expected route to it.
type verdictKey struct {
	guid   ibmad.GUID
	lid    uint16
	inPort string
}

type verdictEntry struct {
	agent   AgentStatus
	actual  uint8
	rtt     time.Duration
	expires time.Time
}

type supportEntry struct {
	ok      bool
	expires time.Time
}

type resolvedEntry struct {
	dlid    uint16
	port    uint8
	expires time.Time
}

// cachedPath is a validated path that a repeat trace can confirm.
type cachedPath struct {
	hops    []Hop
	inPorts [][]uint8 // per hop, the SourceRoute InPort array sent
	srcLID  uint16
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
	return &Tracer{e: e, opts: o, desc: map[ibmad.GUID]string{}, top: map[ibmad.GUID]uint16{},
		support: map[ibmad.GUID]supportEntry{}, paths: map[uint16]*cachedPath{}, resolved: map[Destination]resolvedEntry{},
		verdicts: map[verdictKey]verdictEntry{}, blocks: map[lftKey]blockEntry{}}
}

// Engine returns the tracer's engine.
func (t *Tracer) Engine() *ibmad.Engine { return t.e }

// walk is the state of one trace.
type walk struct {
	t    *Tracer
	ctx  context.Context
	src  ibmad.PortAttributes
	dlid uint16
	mads atomic.Int64

	mu     sync.Mutex
	nodeAt map[string]nodeID // DR path -> node, for LID-route computations
	lft    map[lftKey]*ibmad.LFTBlock
}

func (t *Tracer) newWalk(ctx context.Context, src ibmad.PortAttributes, dlid uint16) *walk {
	return &walk{t: t, ctx: ctx, src: src, dlid: dlid, nodeAt: map[string]nodeID{}, lft: map[lftKey]*ibmad.LFTBlock{}}
}

type nodeID struct {
	guid     ibmad.GUID
	inPort   uint8
	isSwitch bool
	path     ibmad.DRPath
}

type lftKey struct {
	guid  ibmad.GUID
	block uint32
}

func (w *walk) do(req *ibmad.Request) (*ibmad.Response, error) {
	req.Timeout, req.Retries = w.t.opts.Timeout, w.t.opts.Retries
	var resp ibmad.Response
	err := w.t.e.Do(w.ctx, req, &resp)
	if err == nil {
		w.mads.Add(int64(resp.Attempts))
	} else {
		n := w.t.opts.Retries + 1
		if w.t.opts.Retries <= 0 {
			n = ibmad.DefaultRetries + 1
			if w.t.opts.Retries < 0 {
				n = 1
			}
		}
		w.mads.Add(int64(n))
	}
	return &resp, err
}

// smp sends a directed-route Get along path.
func (w *walk) smp(path ibmad.DRPath, attr ibmad.AttrID, mod uint32) (*ibmad.Response, error) {
	var s ibmad.SMP
	if err := s.InitDRGet(attr, mod, path); err != nil {
		return nil, err
	}
	req := &ibmad.Request{Addr: ibmad.DRAddress()}
	_ = s.MarshalTo(req.MAD[:])
	resp, err := w.do(req)
	if err != nil {
		return nil, err
	}
	if st := ibmad.SMPStatus(&resp.MAD); st != 0 {
		return nil, fmt.Errorf("%s along DR path %s: %w", ibmad.AttrName(ibmad.ClassSubnDR, attr), path, st.Err())
	}
	return resp, nil
}

func (w *walk) nodeInfo(path ibmad.DRPath) (ibmad.NodeInfo, time.Duration, error) {
	var ni ibmad.NodeInfo
	resp, err := w.smp(path, ibmad.AttrNodeInfo, 0)
	if err != nil {
		return ni, 0, err
	}
	err = ni.UnmarshalBinary(resp.MAD.SMPData())
	return ni, resp.RTT, err
}

func (w *walk) portInfo(path ibmad.DRPath, port uint8) (ibmad.PortInfo, error) {
	var pi ibmad.PortInfo
	resp, err := w.smp(path, ibmad.AttrPortInfo, uint32(port))
	if err != nil {
		return pi, err
	}
	err = pi.UnmarshalBinary(resp.MAD.SMPData())
	return pi, err
}

// description returns a node's description, cached by GUID.
func (w *walk) description(guid ibmad.GUID, path ibmad.DRPath) (string, error) {
	w.t.mu.Lock()
	d, ok := w.t.desc[guid]
	w.t.mu.Unlock()
	if ok {
		return d, nil
	}
	resp, err := w.smp(path, ibmad.AttrNodeDescription, 0)
	if err != nil {
		return "", err
	}
	var nd ibmad.NodeDescription
	_ = nd.UnmarshalBinary(resp.MAD.SMPData())
	d = nd.String()
	w.t.mu.Lock()
	w.t.desc[guid] = d
	w.t.mu.Unlock()
	return d, nil
}

// lftBlock reads (once per trace) the LFT block of a switch.
func (w *walk) lftBlock(guid ibmad.GUID, path ibmad.DRPath, block uint32) (*ibmad.LFTBlock, error) {
	k := lftKey{guid, block}
	w.mu.Lock()
	b := w.lft[k]
	w.mu.Unlock()
	if b != nil {
		return b, nil
	}
	resp, err := w.smp(path, ibmad.AttrLinearForwardingTable, block)
	if err != nil {
		return nil, err
	}
	b = new(ibmad.LFTBlock)
	_ = b.UnmarshalBinary(resp.MAD.SMPData())
	w.mu.Lock()
	w.lft[k] = b
	w.mu.Unlock()
	return b, nil
}

// sharedBlock is lftBlock for the fast path: with ShareValidation it
// reuses a block another destination's trace read within that time (a
// block holds 64 LIDs), so a route change shows at most that much later.
func (w *walk) sharedBlock(guid ibmad.GUID, path ibmad.DRPath, block uint32) (*ibmad.LFTBlock, error) {
	ttl := w.t.opts.ShareValidation
	if ttl <= 0 {
		return w.lftBlock(guid, path, block)
	}
	k := lftKey{guid, block}
	w.t.mu.Lock()
	e, ok := w.t.blocks[k]
	w.t.mu.Unlock()
	if ok && time.Now().Before(e.expires) {
		return &e.block, nil
	}
	b, err := w.lftBlock(guid, path, block)
	if err != nil {
		return nil, err
	}
	w.t.mu.Lock()
	if len(w.t.blocks) > 1<<16 {
		w.t.blocks = map[lftKey]blockEntry{} // bounded
	}
	w.t.blocks[k] = blockEntry{block: *b, expires: time.Now().Add(ttl)}
	w.t.mu.Unlock()
	return b, nil
}

// switchTop returns LinearFDBTop, cached; fresh re-reads it.
func (w *walk) switchTop(guid ibmad.GUID, path ibmad.DRPath, fresh bool) (uint16, error) {
	w.t.mu.Lock()
	top, ok := w.t.top[guid]
	w.t.mu.Unlock()
	if ok && !fresh {
		return top, nil
	}
	resp, err := w.smp(path, ibmad.AttrSwitchInfo, 0)
	if err != nil {
		return 0, err
	}
	var si ibmad.SwitchInfo
	_ = si.UnmarshalBinary(resp.MAD.SMPData())
	w.t.mu.Lock()
	w.t.top[guid] = si.LinearFDBTop
	w.t.mu.Unlock()
	return si.LinearFDBTop, nil
}

func owns(h *Hop, lid uint16) bool {
	return h.LID != 0 && lid >= h.LID && uint32(lid) <= uint32(h.LID)+uint32(1)<<(h.LMC&7)-1
}

func name(h *Hop) string {
	if h.NodeDesc != "" {
		return fmt.Sprintf("%s %q (%s)", h.NodeType, h.NodeDesc, h.NodeGUID)
	}
	return fmt.Sprintf("%s %s", h.NodeType, h.NodeGUID)
}

// smpFail classifies a failed SMP of the walk.
func (w *walk) smpFail(err error, format string, a ...any) *Error {
	what := fmt.Sprintf(format, a...)
	switch {
	case errors.Is(err, ibmad.ErrClosed), errors.Is(err, ibmad.ErrDeviceLost):
		return fail(StatusDevice, ReasonDevice, err, "%s: %v", what, err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fail(StatusUnreachable, ReasonTimeout, err, "%s: %v", what, err)
	case errors.Is(err, ibmad.ErrTimeout):
		return fail(StatusUnreachable, ReasonTimeout, err, "%s: no answer: %v", what, err)
	}
	return fail(StatusUnreachable, ReasonNoRoute, err, "%s: %v", what, err)
}

// egressFor returns the port switch h forwards dlid out of.
func (w *walk) egressFor(h *Hop, dlid uint16) (uint8, *Error) {
	top, err := w.switchTop(h.NodeGUID, h.DRPath, false)
	if err != nil {
		return 0, w.smpFail(err, "SwitchInfo of %s", name(h))
	}
	if dlid > top {
		if top, err = w.switchTop(h.NodeGUID, h.DRPath, true); err != nil {
			return 0, w.smpFail(err, "SwitchInfo of %s", name(h))
		}
		if dlid > top {
			return 0, fail(StatusUnreachable, ReasonNoRoute, nil,
				"no route to LID %d: it is above LinearFDBTop %d of %s", dlid, top, name(h))
		}
	}
	b, err := w.lftBlock(h.NodeGUID, h.DRPath, ibmad.LFTBlockOf(dlid))
	if err != nil {
		return 0, w.smpFail(err, "LinearForwardingTable block %d of %s", ibmad.LFTBlockOf(dlid), name(h))
	}
	port := b.Port(dlid)
	switch {
	case port == ibmad.LFTNoRoute:
		return 0, fail(StatusUnreachable, ReasonNoRoute, nil, "no route to LID %d: %s has no forwarding entry for it", dlid, name(h))
	case port == 0:
		return 0, fail(StatusUnreachable, ReasonNoRoute, nil,
			"no route to LID %d: %s forwards it to its own port 0 but its LID is %d", dlid, name(h), h.LID)
	case port > h.numPorts:
		return 0, fail(StatusUnreachable, ReasonNoRoute, nil,
			"no route to LID %d: %s forwards it to port %d but has %d ports", dlid, name(h), port, h.numPorts)
	}
	return port, nil
}

// walkPath is the directed-route walk (design §4 step 1).
func (w *walk) walkPath() ([]Hop, *Error) {
	ni, rtt, err := w.nodeInfo(ibmad.DRPath{})
	if err != nil {
		return nil, w.smpFail(err, "NodeInfo of the local node")
	}
	desc, err := w.description(ni.NodeGUID, ibmad.DRPath{})
	if err != nil {
		return nil, w.smpFail(err, "NodeDescription of the local node")
	}
	hops := []Hop{{NodeGUID: ni.NodeGUID, PortGUID: ni.PortGUID, NodeType: ni.NodeType, NodeDesc: desc,
		LID: w.src.LID, LMC: w.src.LMC, DRPath: ibmad.DRPath{}, Agent: AgentSource, RTT: rtt, numPorts: ni.NumPorts}}
	if ni.NodeType == ibmad.NodeTypeSwitch {
		hops[0].LMC = 0
	}
	w.remember(ibmad.DRPath{}, nodeID{guid: ni.NodeGUID, inPort: ni.LocalPortNum, isSwitch: ni.NodeType == ibmad.NodeTypeSwitch})
	if owns(&hops[0], w.dlid) {
		return hops, nil
	}
	var egress uint8
	if ni.NodeType == ibmad.NodeTypeSwitch {
		var ferr *Error
		if egress, ferr = w.egressFor(&hops[0], w.dlid); ferr != nil {
			return hops, ferr
		}
	} else {
		if w.src.State != ibmad.PortStateActive {
			return hops, fail(StatusUnreachable, ReasonPortDown, nil, "the local port %s/%d is %s, not Active",
				w.src.CA, w.src.PortNum, w.src.State)
		}
		egress = w.src.PortNum
		if egress == 0 {
			egress = ni.LocalPortNum
		}
	}
	hops[0].OutPort = egress
	seen := map[ibmad.GUID]bool{ni.NodeGUID: true}
	for {
		cur := &hops[len(hops)-1]
		if len(hops) > ibmad.MaxTraceHops {
			return hops, fail(StatusTooLong, ReasonTooLong, nil, "path to LID %d is longer than %d hops", w.dlid, ibmad.MaxTraceHops)
		}
		if len(cur.DRPath) >= ibmad.MaxDRHops {
			return hops, fail(StatusTooLong, ReasonTooLong, nil, "path to LID %d is longer than a directed route can reach (%d hops)",
				w.dlid, ibmad.MaxDRHops)
		}
		path := cur.DRPath.Extend(egress)
		ni, rtt, err := w.nodeInfo(path)
		if err != nil {
			if errors.Is(err, ibmad.ErrTimeout) && cur.NodeType == ibmad.NodeTypeSwitch {
				if pi, perr := w.portInfo(cur.DRPath, egress); perr == nil && pi.PortState != ibmad.PortStateActive {
					return hops, fail(StatusUnreachable, ReasonPortDown, err, "port %d of %s is %s (%s), not Active",
						egress, name(cur), pi.PortState, pi.PortPhysState)
				}
			}
			return hops, w.smpFail(err, "hop %d, behind port %d of %s", len(hops), egress, name(cur))
		}
		isSwitch := ni.NodeType == ibmad.NodeTypeSwitch
		if seen[ni.NodeGUID] && isSwitch { // a CA forwards nothing; reaching one twice is a port of it
			return hops, fail(StatusUnreachable, ReasonLoop, nil, "routing loop: LID %d comes back to %s %s at hop %d",
				w.dlid, ni.NodeType, ni.NodeGUID, len(hops))
		}
		seen[ni.NodeGUID] = true
		desc, err := w.description(ni.NodeGUID, path)
		if err != nil {
			return hops, w.smpFail(err, "NodeDescription at hop %d", len(hops))
		}
		pi, err := w.portInfo(path, 0)
		if err != nil {
			return hops, w.smpFail(err, "PortInfo of %s %q", ni.NodeType, desc)
		}
		h := Hop{Hop: len(hops), NodeGUID: ni.NodeGUID, PortGUID: ni.PortGUID, NodeType: ni.NodeType, NodeDesc: desc,
			LID: pi.LID, LMC: pi.LMC, InPort: ni.LocalPortNum, DRPath: path, RTT: rtt, numPorts: ni.NumPorts}
		if isSwitch {
			h.LMC = 0
		}
		hops = append(hops, h)
		w.remember(path, nodeID{guid: ni.NodeGUID, inPort: ni.LocalPortNum, isSwitch: isSwitch})
		last := &hops[len(hops)-1]
		if !isSwitch && pi.PortState != ibmad.PortStateActive {
			return hops, fail(StatusUnreachable, ReasonPortDown, nil, "port %d of %s is %s, not Active", last.InPort, name(last), pi.PortState)
		}
		if owns(last, w.dlid) {
			return hops, nil
		}
		if !isSwitch {
			return hops, fail(StatusUnreachable, ReasonNoRoute, nil,
				"no route to LID %d: the path ends at %s (LID %d), which does not own it", w.dlid, name(last), last.LID)
		}
		var ferr *Error
		if egress, ferr = w.egressFor(last, w.dlid); ferr != nil {
			return hops, ferr
		}
		last.OutPort = egress
	}
}

func (w *walk) remember(path ibmad.DRPath, n nodeID) {
	n.path = path
	w.mu.Lock()
	w.nodeAt[path.String()] = n
	w.mu.Unlock()
}

// nodeAtPath returns the node a DR path leads to, asking only once.
func (w *walk) nodeAtPath(path ibmad.DRPath) (nodeID, error) {
	w.mu.Lock()
	n, ok := w.nodeAt[path.String()]
	w.mu.Unlock()
	if ok {
		return n, nil
	}
	ni, _, err := w.nodeInfo(path)
	if err != nil {
		return nodeID{}, err
	}
	n = nodeID{guid: ni.NodeGUID, inPort: ni.LocalPortNum, isSwitch: ni.NodeType == ibmad.NodeTypeSwitch, path: path}
	w.remember(path, n)
	return n, nil
}

// routeTo follows the forwarding tables from the source toward target, the
// LID of hop i, and returns the number of links to it and the expected
// ingress port at each (design §4 step 2): in a fat tree the route to a
// switch's own LID need not be a prefix of the route to the DLID.
func (w *walk) routeTo(hops []Hop, i int, target uint16) (int, []uint8, error) {
	want := hops[i].NodeGUID
	var cur nodeID
	var in []uint8
	if hops[0].NodeType == ibmad.NodeTypeSwitch {
		cur = nodeID{guid: hops[0].NodeGUID, isSwitch: true, path: ibmad.DRPath{}}
	} else {
		cur = nodeID{guid: hops[1].NodeGUID, inPort: hops[1].InPort, isSwitch: hops[1].NodeType == ibmad.NodeTypeSwitch, path: hops[1].DRPath}
		in = append(in, hops[1].InPort)
	}
	for {
		if cur.guid == want {
			return len(in), in, nil
		}
		if !cur.isSwitch {
			return 0, nil, fmt.Errorf("the LID route to %d ends at CA %s", target, cur.guid)
		}
		if len(in) >= ibmad.MaxTraceHops || len(cur.path) >= ibmad.MaxDRHops {
			return 0, nil, fmt.Errorf("the LID route to %d is longer than %d hops", target, ibmad.MaxTraceHops)
		}
		b, err := w.lftBlock(cur.guid, cur.path, ibmad.LFTBlockOf(target))
		if err != nil {
			return 0, nil, err
		}
		port := b.Port(target)
		if port == 0 || port == ibmad.LFTNoRoute {
			return 0, nil, fmt.Errorf("switch %s has no forwarding entry for LID %d", cur.guid, target)
		}
		next, err := w.nodeAtPath(cur.path.Extend(port))
		if err != nil {
			return 0, nil, err
		}
		in = append(in, next.inPort)
		cur = next
	}
}

// supported asks (or remembers) whether node h runs the agent.
func (w *walk) supported(h *Hop) bool {
	w.t.mu.Lock()
	s, ok := w.t.support[h.NodeGUID]
	w.t.mu.Unlock()
	if ok && time.Now().Before(s.expires) {
		return s.ok
	}
	v := ibmad.NewVendorGet(ibmad.ClassIBTracer, w.t.opts.OUI, ibmad.AttrClassPortInfo, 0)
	req := &ibmad.Request{Addr: ibmad.GSIAddress(h.LID, w.t.opts.SL)}
	_ = v.MarshalTo(req.MAD[:])
	resp, err := w.do(req)
	yes := err == nil && resp.MAD.Status() == 0
	w.t.setSupport(h.NodeGUID, yes)
	return yes
}

func (t *Tracer) setSupport(g ibmad.GUID, ok bool) {
	t.mu.Lock()
	t.support[g] = supportEntry{ok: ok, expires: time.Now().Add(t.opts.SupportTTL)}
	t.mu.Unlock()
}

// sourceRoute sends VendorGet(SourceRoute) to lid and records the verdict
// in h. learn lets a lost agent update the support cache (the walk does;
// the fast path leaves that to the walk it falls back to).
func (w *walk) sourceRoute(h *Hop, lid uint16, count int, in []uint8, learn bool) {
	h.RouteHops, h.ExpectedInPort = count, in[count-1]
	key := verdictKey{h.NodeGUID, lid, string(in)}
	if ttl := w.t.opts.ShareValidation; ttl > 0 && lid != w.dlid {
		w.t.mu.Lock()
		v, ok := w.t.verdicts[key]
		w.t.mu.Unlock()
		if ok && time.Now().Before(v.expires) {
			h.Agent, h.ActualInPort, h.AgentRTT = v.agent, v.actual, v.rtt
			return
		}
		defer func() {
			if h.Agent == AgentValidated || h.Agent == AgentIngressUnknown {
				w.t.mu.Lock()
				if len(w.t.verdicts) > 1<<16 {
					w.t.verdicts = map[verdictKey]verdictEntry{} // bounded
				}
				w.t.verdicts[key] = verdictEntry{agent: h.Agent, actual: h.ActualInPort, rtt: h.AgentRTT, expires: time.Now().Add(ttl)}
				w.t.mu.Unlock()
			}
		}()
	}
	sr := ibmad.SourceRoute{HopCount: uint8(count)}
	copy(sr.InPort[:], in)
	v := ibmad.NewVendorGet(ibmad.ClassIBTracer, w.t.opts.OUI, ibmad.AttrSourceRoute, 0)
	_ = sr.MarshalTo(v.Data[:])
	req := &ibmad.Request{Addr: ibmad.GSIAddress(lid, w.t.opts.SL)}
	_ = v.MarshalTo(req.MAD[:])
	resp, err := w.do(req)
	if err != nil {
		h.Agent = AgentLost
		if learn {
			w.t.setSupport(h.NodeGUID, false)
		}
		return
	}
	h.AgentRTT = resp.RTT
	st := resp.MAD.Status()
	var got ibmad.SourceRoute
	if derr := got.UnmarshalBinary(resp.MAD.VendorData()); derr != nil || (st != 0 && !st.IsStatus7()) {
		h.Agent = AgentLost // 0x000C: the agent is gone
		if learn {
			w.t.setSupport(h.NodeGUID, false)
		}
		return
	}
	known := got.ExtVersion == 0 || got.IngressKnown()
	switch {
	case got.ExtVersion != 0 && got.NodeGUID != h.NodeGUID:
		// The LID route led to another node than the walk found.
		h.Agent, h.ActualInPort = AgentMismatch, got.ActualInPort
	case st.IsStatus7():
		h.Agent, h.ActualInPort = AgentMismatch, got.ActualInPort
	case !known:
		h.Agent = AgentIngressUnknown
	default:
		h.Agent, h.ActualInPort = AgentValidated, got.ActualInPort
	}
}

// validate asks every hop's agent, all at once (design §4 steps 2-3).
func (w *walk) validate(hops []Hop) [][]uint8 {
	inPorts := make([][]uint8, len(hops))
	var wg sync.WaitGroup
	for i := 1; i < len(hops); i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			h := &hops[i]
			if h.LID == 0 || !w.supported(h) {
				h.Agent = AgentUnsupported
				return
			}
			target := h.LID
			if i == len(hops)-1 {
				target = w.dlid // the destination: the traced route itself
			}
			count, in, err := w.routeTo(hops, i, target)
			if err != nil {
				h.Agent = AgentUnsupported
				return
			}
			inPorts[i] = in
			w.sourceRoute(h, target, count, in, true)
		}(i)
	}
	wg.Wait()
	return inPorts
}
