package trace

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sa"
)

// walk is the state of one trace: where it starts and goes, the nodes
// and LFT blocks it has read, and what it sent. It reads by directed-route
// SMP (the facts a run shares: facts.go) or, in SA mode, from the SA's
// records (sawalk.go); the validator asks its hops' agents and SMAs
// (validate.go).
type walk struct {
	t    *Tracer
	ctx  context.Context
	src  ibmad.PortAttributes
	dlid uint16
	// dest is the destination's resolution: the port it names, whether it
	// came from the cache, a router to another subnet (resolve.go).
	dest resolution
	snd  *sender // its MADs, counted
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
	// elsewhere (TraceFrom): validation MADs leave from the local port.
	origin []Hop
	// addr is how the validation MADs are addressed: SL, GRH (addressing.go).
	addr Addressing
}

func newWalk(t *Tracer, ctx context.Context, src ibmad.PortAttributes, dlid uint16) *walk {
	return &walk{t: t, ctx: ctx, src: src, dlid: dlid, snd: newSender(t.e, &t.opts), nodeAt: map[string]nodeID{},
		lft: map[lftKey]*ibmad.LFTBlock{}, viaSA: t.sa.use(), addr: t.opts.AddressingFor(nil, src)}
}

// nodeID is a node the walk knows by the DR path that reaches it.
type nodeID struct {
	guid     ibmad.GUID
	inPort   uint8
	isSwitch bool
	path     ibmad.DRPath
	lid      uint16 // SA mode: the LID the SA knows the node's port by
}

// lftKey names one LFT block of one switch.
type lftKey struct {
	guid  ibmad.GUID
	block uint32
}

// rewalk is a new walk of w's trace: the same source and destination,
// reading the SA or sending SMPs as viaSA says, and addressing its
// validation MADs as w does (the PathRecord's SL and GRH), since the
// result reports w's addressing. It reads every fact itself when w does
// (a fresh trace: facts.go) or when fresh says so. Every walk that
// traces a destination again (the SA fallback, SMPs after the SA's
// limit, the mismatch re-walk) starts here, through Tracer.retrace.
func (w *walk) rewalk(viaSA, fresh bool) *walk {
	w2 := newWalk(w.t, w.ctx, w.src, w.dlid)
	w2.addr, w2.viaSA = w.addr, viaSA
	w2.fresh.Store(fresh || w.fresh.Load())
	return w2
}

// absorb counts what w2, a walk w started for its trace, sent and shared
// as w's own.
func (w *walk) absorb(w2 *walk) {
	w.snd.mads.Add(w2.snd.mads.Load())
	w.saReqs.Add(w2.saReqs.Load())
	w.shared.Add(w2.shared.Load())
}

// madCount is how many MADs the walk sent, retries included.
func (w *walk) madCount() int { return int(w.snd.mads.Load()) }

func (w *walk) do(req *ibmad.Request) (*ibmad.Response, error) {
	var resp ibmad.Response
	err := w.snd.Do(w.ctx, req, &resp)
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

// fact returns the answer to the directed-route Get(attr, mod) along
// path, which k names: shared with the other traces unless the walk is
// fresh (then it asks, and its answer replaces the shared one).
func (w *walk) fact(k factKey, path ibmad.DRPath, attr ibmad.AttrID, mod uint32) (answer, error) {
	ask := func() (answer, error) {
		resp, err := w.smp(path, attr, mod)
		if err != nil {
			return answer{}, err
		}
		return answerOf(resp), nil
	}
	f := w.t.facts
	if f == nil {
		return ask()
	}
	if w.fresh.Load() {
		a, err := ask()
		if err == nil {
			f.put(k, a)
		}
		return a, err
	}
	a, shared, err := f.get(w.ctx, k, ask)
	if shared {
		w.shared.Add(1)
	}
	return a, err
}

// refresh makes w read every fact itself from now on, forgetting those it
// read or was given: it saw a change.
func (w *walk) refresh() {
	w.fresh.Store(true)
	w.mu.Lock()
	w.nodeAt = map[string]nodeID{}
	w.lft = map[lftKey]*ibmad.LFTBlock{}
	w.mu.Unlock()
}

// reliedOnShared says whether w used an answer another trace asked for.
func (w *walk) reliedOnShared() bool { return w != nil && w.shared.Load() > 0 }

// wrongPort is why w's trace, r, did not reach the port its destination
// names (resolve.go); nil for no walk (TraceFrom's local port, checked
// by Trace).
func (w *walk) wrongPort(r *Result) *Error {
	if w == nil {
		return nil
	}
	return w.dest.wrongPort(r)
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
// a CA's, the port the route enters by, one per route (facts.go). The
// link health, if it asked (Tracer.OnPortInfo), is told what was read.
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
	if err = pi.UnmarshalBinary(a.data[:]); err == nil {
		if h := w.t.health.Load(); h != nil {
			(*h)(ni, &pi)
		}
	}
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

// lftBlock reads (once per trace) the LFT block of a switch, by SMP or
// from the SA. With ShareValidation the block read replaces the shared
// copy (fastpath.go): it is the freshest there is; with ShareFacts the
// facts are that copy.
func (w *walk) lftBlock(guid ibmad.GUID, path ibmad.DRPath, block uint32) (*ibmad.LFTBlock, error) {
	k := lftKey{guid, block}
	w.mu.Lock()
	b := w.lft[k]
	w.mu.Unlock()
	if b != nil {
		return b, nil
	}
	if w.viaSA {
		var err error
		if b, err = w.t.sa.lftBlockOf(w, guid, block); err != nil {
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
	if w.t.facts == nil { // else the facts keep it (fastpath.go)
		w.t.fast.keepBlock(k, b)
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

func (w *walk) remember(path ibmad.DRPath, n nodeID) {
	n.path = path
	w.mu.Lock()
	w.nodeAt[string(path)] = n
	w.mu.Unlock()
}

// known returns the node the walk knows at path, if any.
func (w *walk) known(path ibmad.DRPath) (nodeID, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, ok := w.nodeAt[string(path)]
	return n, ok
}

// nodeAtPath returns the node a DR path leads to, asking only once.
func (w *walk) nodeAtPath(path ibmad.DRPath) (nodeID, error) {
	if n, ok := w.known(path); ok {
		return n, nil
	}
	if w.viaSA {
		return w.t.sa.nodeAtPath(w, path)
	}
	ni, _, err := w.nodeInfo(path)
	if err != nil {
		return nodeID{}, err
	}
	n := nodeID{guid: ni.NodeGUID, inPort: ni.LocalPortNum, isSwitch: ni.NodeType == ibmad.NodeTypeSwitch, path: path}
	w.remember(path, n)
	return n, nil
}

// toDest says whether a MAD to lid at hop h goes to the destination: lid
// is the DLID, or h is the port whose LID range holds it.
func (w *walk) toDest(lid uint16, h *Hop) bool {
	if lid == w.dlid {
		return true
	}
	return h != nil && h.NodeType != ibmad.NodeTypeSwitch && uint32(w.dlid) >= uint32(h.LID) &&
		uint32(w.dlid) < uint32(h.LID)+uint32(1)<<(h.LMC&7)
}

// gmpAddr is the address of this walk's vendor MAD to lid at hop h.
func (w *walk) gmpAddr(lid uint16, h *Hop) ibmad.Address {
	return w.addr.GMPAddress(lid, w.toDest(lid, h))
}

// askSA sends one SubnAdmGet to the SA at addr for the record of attr
// that tmpl, a record's wire form, names under mask (ibmad/sa), through
// the walk's sender: it returns the record's data, or the SA's non-zero
// status st, or the error of a request that got no answer.
func (w *walk) askSA(addr ibmad.Address, attr ibmad.AttrID, mask uint64, tmpl []byte) (data []byte, st ibmad.Status, err error) {
	data, err = sa.Get(w.ctx, w.snd, addr, attr, mask, tmpl)
	if se := (*ibmad.StatusError)(nil); errors.As(err, &se) {
		return nil, se.Status, nil
	}
	return data, 0, err
}

// wire is a record's wire form: a SubnAdmGet's template.
func wire(r interface{ MarshalBinary() ([]byte, error) }) []byte {
	b, _ := r.MarshalBinary()
	return b
}
