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

// walk is the state of one trace.
type walk struct {
	t    *Tracer
	ctx  context.Context
	src  ibmad.PortAttributes
	dlid uint16
	// want is the port the destination names, cachedDLID whether dlid
	// came from the resolution cache (reached.go).
	want       identity
	cachedDLID bool
	remote     *remoteEntry // a GID of another subnet (subnet.go)
	mads       atomic.Int64
	// viaSA: the walk reads SA records instead of sending SMPs (sawalk.go);
	// saReqs counts the SA record requests it sent.
	viaSA  bool
	saReqs atomic.Int64
	// fresh: the walk asks every fact itself; shared counts the answers
	// it took from other traces' questions (facts.go).
	fresh  atomic.Bool
	shared atomic.Int64

	mu     sync.Mutex
	nodeAt map[string]nodeID // DR path (its bytes) -> node, for LID-route computations
	lft    map[lftKey]*ibmad.LFTBlock
	// origin is the start of the local node's path when the trace starts
	// elsewhere (source.go): validation MADs leave from the local port.
	origin []Hop
	// addr is how the validation MADs are addressed: SL, GRH (addressing.go).
	addr Addressing
}

func (t *Tracer) newWalk(ctx context.Context, src ibmad.PortAttributes, dlid uint16) *walk {
	return &walk{t: t, ctx: ctx, src: src, dlid: dlid, nodeAt: map[string]nodeID{}, lft: map[lftKey]*ibmad.LFTBlock{}, viaSA: t.useSA(), addr: t.opts.AddressingFor(nil, src)}
}

type nodeID struct {
	guid     ibmad.GUID
	inPort   uint8
	isSwitch bool
	path     ibmad.DRPath
	lid      uint16 // SA mode: the LID the SA knows the node's port by
}

func (w *walk) do(req *ibmad.Request) (*ibmad.Response, error) {
	req.Timeout, req.Retries, req.NoRetry = w.t.opts.Timeout, w.t.opts.Retries, w.t.opts.NoRetry
	var resp ibmad.Response
	err := w.t.e.Do(w.ctx, req, &resp)
	if err == nil {
		w.mads.Add(int64(resp.Attempts))
	} else {
		w.mads.Add(int64(w.t.opts.attempts()))
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
	a, err := w.fact(pathFact(path, ibmad.AttrNodeInfo, 0), path, ibmad.AttrNodeInfo, 0)
	if err != nil {
		return ni, 0, err
	}
	err = ni.UnmarshalBinary(a.data[:])
	return ni, a.rtt, err
}

func (w *walk) portInfo(path ibmad.DRPath, port uint8) (ibmad.PortInfo, error) {
	var pi ibmad.PortInfo
	a, err := w.fact(pathFact(path, ibmad.AttrPortInfo, uint32(port)), path, ibmad.AttrPortInfo, uint32(port))
	if err != nil {
		return pi, err
	}
	err = pi.UnmarshalBinary(a.data[:])
	return pi, err
}

// hopPortInfo reads the PortInfo (modifier 0) of ni, the node at path:
// a switch's port 0 is one fact per switch, whichever route reaches it;
// a CA's, the port the route enters by, one per route (facts.go).
func (w *walk) hopPortInfo(ni *ibmad.NodeInfo, path ibmad.DRPath) (ibmad.PortInfo, error) {
	k := pathFact(path, ibmad.AttrPortInfo, 0)
	if ni.NodeType == ibmad.NodeTypeSwitch {
		k = nodeFact(ni.NodeGUID, ibmad.AttrPortInfo, 0)
	}
	var pi ibmad.PortInfo
	a, err := w.fact(k, path, ibmad.AttrPortInfo, 0)
	if err != nil {
		return pi, err
	}
	err = pi.UnmarshalBinary(a.data[:])
	return pi, err
}

// description returns a node's description, cached by GUID.
func (w *walk) description(guid ibmad.GUID, path ibmad.DRPath) (string, error) {
	if d, ok := w.t.desc.Get(guid); ok {
		return d, nil
	}
	a, err := w.fact(nodeFact(guid, ibmad.AttrNodeDescription, 0), path, ibmad.AttrNodeDescription, 0)
	if err != nil {
		return "", err
	}
	var nd ibmad.NodeDescription
	_ = nd.UnmarshalBinary(a.data[:])
	d := nd.String()
	w.t.desc.Put(guid, d)
	return d, nil
}

// lftBlock reads (once per trace) the LFT block of a switch. With
// ShareValidation the block read replaces the shared copy (fastpath.go):
// it is the freshest there is; with ShareFacts the facts are that copy.
func (w *walk) lftBlock(guid ibmad.GUID, path ibmad.DRPath, block uint32) (*ibmad.LFTBlock, error) {
	k := lftKey{guid, block}
	w.mu.Lock()
	b := w.lft[k]
	w.mu.Unlock()
	if b != nil {
		return b, nil
	}
	if w.viaSA {
		lid, err := w.saLIDOf(guid)
		if err != nil {
			return nil, err
		}
		if b, err = w.saLFTBlock(lid, block); err != nil {
			return nil, err
		}
	} else {
		a, err := w.fact(nodeFact(guid, ibmad.AttrLinearForwardingTable, block), path, ibmad.AttrLinearForwardingTable, block)
		if err != nil {
			return nil, err
		}
		b = new(ibmad.LFTBlock)
		_ = b.UnmarshalBinary(a.data[:])
	}
	w.mu.Lock()
	w.lft[k] = b
	w.mu.Unlock()
	if w.t.opts.ShareValidation > 0 && w.t.facts == nil { // else the facts keep it (fastpath.go)
		w.t.blocks.Put(k, *b)
	}
	return b, nil
}

// switchTop returns LinearFDBTop, cached; fresh re-reads it.
func (w *walk) switchTop(guid ibmad.GUID, path ibmad.DRPath, fresh bool) (uint16, error) {
	if top, ok := w.t.top.Get(guid); ok && !fresh {
		return top, nil
	}
	k := nodeFact(guid, ibmad.AttrSwitchInfo, 0)
	var a answer
	var err error
	if fresh && w.t.facts != nil {
		var resp *ibmad.Response
		if resp, err = w.smp(path, ibmad.AttrSwitchInfo, 0); err == nil {
			a = answerOf(resp)
			w.t.facts.put(k, a)
		}
	} else {
		a, err = w.fact(k, path, ibmad.AttrSwitchInfo, 0)
	}
	if err != nil {
		return 0, err
	}
	var si ibmad.SwitchInfo
	_ = si.UnmarshalBinary(a.data[:])
	w.t.top.Put(guid, si.LinearFDBTop)
	return si.LinearFDBTop, nil
}

func owns(h *Hop, lid uint16) bool {
	return h.LID != 0 && lid >= h.LID && uint32(lid) <= uint32(h.LID)+uint32(1)<<(h.LMC&7)-1
}

func name(h *Hop) string {
	if n := h.shownName(); n != "" { // its node-name-map name once named (NameHops), else its description
		return fmt.Sprintf("%s %q (%s)", h.NodeType, n, h.NodeGUID)
	}
	return fmt.Sprintf("%s %s", h.NodeType, h.NodeGUID)
}

// smpFail classifies a failed SMP of the walk.
func (w *walk) smpFail(err error, format string, a ...any) *Error {
	what := fmt.Sprintf(format, a...)
	switch {
	case errors.Is(err, ibmad.ErrClosed), errors.Is(err, ibmad.ErrDeviceLost), errors.Is(err, ibmad.ErrRequestRefused):
		// Lost, closed, or this request refused by the local kernel
		// (docs/protocol.md, "Send errors"): nothing about the fabric.
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
	return forwardPort(h, b, dlid)
}

// forwardPort returns the port block b of switch h forwards dlid out of,
// or why that entry is no route.
func forwardPort(h *Hop, b *ibmad.LFTBlock, dlid uint16) (uint8, *Error) {
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

// localDown is why a CA's walk cannot leave its local port: the port is
// not Active (nil when it is).
func (w *walk) localDown() *Error {
	if w.src.State != ibmad.PortStateActive {
		return fail(StatusUnreachable, ReasonPortDown, nil, "the local port %s/%d is %s, not Active",
			w.src.CA, w.src.PortNum, w.src.State)
	}
	return nil
}

// revisit marks node ni, met at hop hop, as seen, and is a routing loop
// when it is a switch already on the path (a CA forwards nothing;
// reaching one twice is a port of it).
func (w *walk) revisit(seen map[ibmad.GUID]bool, ni *ibmad.NodeInfo, hop int) *Error {
	if seen[ni.NodeGUID] && ni.NodeType == ibmad.NodeTypeSwitch {
		return fail(StatusUnreachable, ReasonLoop, nil, "routing loop: LID %d comes back to %s %s at hop %d",
			w.dlid, ni.NodeType, ni.NodeGUID, hop)
	}
	seen[ni.NodeGUID] = true
	return nil
}

// arrived reports whether the walk ends at last: it owns w.dlid, or it
// is a CA (which forwards nothing) that does not: then the error.
func (w *walk) arrived(last *Hop) (bool, *Error) {
	if owns(last, w.dlid) {
		return true, nil
	}
	if last.NodeType != ibmad.NodeTypeSwitch {
		return true, fail(StatusUnreachable, ReasonNoRoute, nil,
			"no route to LID %d: the path ends at %s (LID %d), which does not own it", w.dlid, name(last), last.LID)
	}
	return false, nil
}

// walkPath is the directed-route walk (docs/architecture.md, "The life of a trace").
func (w *walk) walkPath() ([]Hop, *Error) {
	if w.viaSA {
		return w.saWalkPath()
	}
	ni, rtt, err := w.nodeInfo(ibmad.DRPath{})
	if err != nil {
		return nil, w.smpFail(err, "NodeInfo of the local node")
	}
	desc, err := w.description(ni.NodeGUID, ibmad.DRPath{})
	if err != nil {
		return nil, w.smpFail(err, "NodeDescription of the local node")
	}
	hops := make([]Hop, 1, 8) // most paths: grown once, not three times
	hops[0] = Hop{NodeGUID: ni.NodeGUID, PortGUID: ni.PortGUID, NodeType: ni.NodeType, NodeDesc: desc,
		LID: w.src.LID, LMC: w.src.LMC, DRPath: ibmad.DRPath{}, Agent: AgentSource, RTT: rtt, numPorts: ni.NumPorts}
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
		if ferr := w.localDown(); ferr != nil {
			return hops, ferr
		}
		egress = w.src.PortNum
		if egress == 0 {
			egress = ni.LocalPortNum
		}
	}
	hops[0].OutPort = egress
	seen := map[ibmad.GUID]bool{ni.NodeGUID: true}
	return w.follow(hops, egress, seen)
}

// follow walks on from the last of hops, which forwards w.dlid out of
// egress, until the node that owns w.dlid; seen holds the nodes already
// on the path.
func (w *walk) follow(hops []Hop, egress uint8, seen map[ibmad.GUID]bool) ([]Hop, *Error) {
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
		if ferr := w.revisit(seen, &ni, len(hops)); ferr != nil {
			return hops, ferr
		}
		desc, err := w.description(ni.NodeGUID, path)
		if err != nil {
			return hops, w.smpFail(err, "NodeDescription at hop %d", len(hops))
		}
		pi, err := w.hopPortInfo(&ni, path)
		if err != nil {
			return hops, w.smpFail(err, "PortInfo of %s %q", ni.NodeType, desc)
		}
		w.t.notePortInfo(&ni, &pi) // reused by the link health (probe.go)
		h := Hop{Hop: len(hops), NodeGUID: ni.NodeGUID, PortGUID: ni.PortGUID, NodeType: ni.NodeType, NodeDesc: desc,
			LID: pi.LID, LMC: pi.LMC, InPort: ni.LocalPortNum, DRPath: path, RTT: rtt, numPorts: ni.NumPorts, lidOwn: true}
		if isSwitch {
			h.LMC = 0
		}
		hops = append(hops, h)
		w.remember(path, nodeID{guid: ni.NodeGUID, inPort: ni.LocalPortNum, isSwitch: isSwitch})
		last := &hops[len(hops)-1]
		if !isSwitch && pi.PortState != ibmad.PortStateActive {
			return hops, fail(StatusUnreachable, ReasonPortDown, nil, "port %d of %s is %s, not Active", last.InPort, name(last), pi.PortState)
		}
		if done, ferr := w.arrived(last); done {
			return hops, ferr
		}
		var ferr *Error
		if egress, ferr = w.egressFor(last, w.dlid); ferr != nil {
			return hops, ferr
		}
		last.OutPort = egress
	}
}
