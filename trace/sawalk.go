package trace

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// saReader is a tracer's SA-only discovery (docs/architecture.md,
// "SA-only discovery"): the walk without SMPs, from the SA's records,
// which it keeps for Options.SARecordTTL (sarecords.go) and counts; and,
// in auto mode, until when SMPs are known to be refused, so that traces
// go to the SA directly.
type saReader struct {
	mode      Discovery
	ttl       time.Duration // how long a record is kept; 0: not at all
	fallFor   time.Duration // how long an auto-mode fallback holds: Options.SupportTTL
	now       func() time.Time
	recs      *ttlCache[saKey, any]
	requests  saCounter
	until     atomic.Int64 // unix nanoseconds; 0: SMPs work
	fallbacks atomic.Int64
}

func newSAReader(o Options) *saReader {
	r := &saReader{mode: o.Discovery, ttl: *o.SARecordTTL, fallFor: o.SupportTTL, now: o.Clock.Now}
	r.recs = newTTLCache[saKey, any](r.ttl, cacheSize, o.Clock.Now)
	return r
}

// use says whether a new walk reads SA records instead of sending SMPs.
func (r *saReader) use() bool {
	switch r.mode {
	case DiscoverySA:
		return true
	case DiscoveryAuto:
		u := r.until.Load()
		return u != 0 && r.now().UnixNano() < u
	}
	return false
}

// fellBack counts an auto-mode trace that fell back to the SA and, when
// the SA traced (ok), sends the traces to the SA directly for a while.
func (r *saReader) fellBack(ok bool) {
	r.fallbacks.Add(1)
	if ok {
		r.until.Store(r.now().Add(r.fallFor).UnixNano())
	}
}

// smpsWork ends a fallback: SMPs traced.
func (r *saReader) smpsWork() { r.until.Store(0) }

// firstHopRefused says whether an SMP walk's failure is the pattern of
// a fabric that does not let this node send SMPs, rather than of a dead
// neighbour: no answer, or an error status, either from the local node
// itself (an HCA's SMP firewall), or from its neighbour while that
// neighbour is alive: the SA knows the link, and the neighbour's
// performance agent (a GMP, which SMP protection does not block) answers
// at the LID the SA gives, asked on the walk's SL.
func (r *saReader) firstHopRefused(w *walk, hops []Hop, e *Error) bool {
	if e == nil || len(hops) > 1 {
		return false
	}
	var se *ibmad.StatusError
	if e.Reason != ReasonTimeout && !errors.As(e.Err, &se) {
		return false
	}
	if len(hops) == 0 {
		return true
	}
	if hops[0].OutPort == 0 || hops[0].NodeType == ibmad.NodeTypeSwitch {
		return false // a switch's own SMPs: its neighbour is not the first hop
	}
	link, err := r.linkFrom(w, w.src.LID, hops[0].OutPort)
	if err != nil {
		return false
	}
	// The probe goes on the walk's SL (addressing.go: the PathRecord's,
	// which may be the only one the path carries), without a GRH: it asks
	// the neighbour's PMA, one link away in our subnet, and a GRH for a
	// remote destination would make a neighbouring router forward it.
	req := &ibmad.Request{Addr: w.addr.GMPAddress(link.toLID, false)}
	_ = ibmad.NewPerfMgtGet(ibmad.AttrClassPortInfo).MarshalTo(req.MAD[:])
	_, err = w.do(req)
	return err == nil // any answer, whatever its status: the neighbour lives
}

// walkPath is walk.walkPath without SMPs (docs/architecture.md, "SA-only
// discovery"): the SA's records stand for what the directed-route walk
// reads. NodeRecord by LID for NodeInfo and the description,
// LinkRecord by (LID, port) for the node behind a port, PortInfoRecord
// for a CA port's LMC and state, LinearForwardingTableRecord by (switch
// LID, block) for the egress port. The DR paths of the hops are kept as
// the walk's bookkeeping (validate.go keys nodes by them); none is sent.
func (r *saReader) walkPath(w *walk) ([]Hop, *Error) {
	me, err := r.nodeAt(w, w.src.LID)
	if err != nil {
		return nil, r.walkFail(w, err, "the local node (LID %d)", w.src.LID)
	}
	isSwitch := me.ni.NodeType == ibmad.NodeTypeSwitch
	hops := []Hop{{NodeGUID: me.ni.NodeGUID, PortGUID: me.ni.PortGUID, NodeType: me.ni.NodeType, NodeDesc: me.desc,
		LID: w.src.LID, LMC: w.src.LMC, DRPath: ibmad.DRPath{}, Agent: AgentSource, numPorts: me.ni.NumPorts}}
	if isSwitch {
		hops[0].LMC = 0
	}
	w.remember(ibmad.DRPath{}, nodeID{guid: me.ni.NodeGUID, inPort: w.src.PortNum, isSwitch: isSwitch, lid: w.src.LID})
	if owns(&hops[0], w.dlid) {
		return hops, nil
	}
	var egress uint8
	if isSwitch {
		var ferr *Error
		if egress, ferr = r.egress(w, &hops[0]); ferr != nil {
			return hops, ferr
		}
	} else {
		if ferr := w.localDown(); ferr != nil {
			return hops, ferr
		}
		egress = w.src.PortNum
	}
	hops[0].OutPort = egress
	seen := map[ibmad.GUID]bool{me.ni.NodeGUID: true}
	for {
		cur := &hops[len(hops)-1]
		if len(hops) > ibmad.MaxTraceHops {
			return hops, fail(StatusTooLong, ReasonTooLong, nil, "path to LID %d is longer than %d hops", w.dlid, ibmad.MaxTraceHops)
		}
		link, err := r.linkFrom(w, cur.LID, egress)
		if err != nil {
			return hops, r.walkFail(w, err, "hop %d, behind port %d of %s", len(hops), egress, name(cur))
		}
		n, err := r.nodeAt(w, link.toLID)
		if err != nil {
			return hops, r.walkFail(w, err, "hop %d, behind port %d of %s", len(hops), egress, name(cur))
		}
		isSwitch := n.ni.NodeType == ibmad.NodeTypeSwitch
		if ferr := w.revisit(seen, &n.ni, len(hops)); ferr != nil {
			return hops, ferr
		}
		path := cur.DRPath.Extend(egress)
		h := Hop{Hop: len(hops), NodeGUID: n.ni.NodeGUID, PortGUID: n.ni.PortGUID, NodeType: n.ni.NodeType, NodeDesc: n.desc,
			LID: link.toLID, InPort: link.toPort, DRPath: path, numPorts: n.ni.NumPorts}
		if !isSwitch {
			pi, err := r.portInfo(w, link.toLID, link.toPort)
			if err != nil {
				return append(hops, h), r.walkFail(w, err, "%s", name(&h))
			}
			h.LID, h.LMC = pi.lid, pi.lmc
			if pi.state != ibmad.PortStateActive {
				return append(hops, h), fail(StatusUnreachable, ReasonPortDown, nil, "port %d of %s is %s, not Active", h.InPort, name(&h), pi.state)
			}
		}
		hops = append(hops, h)
		w.remember(path, nodeID{guid: h.NodeGUID, inPort: h.InPort, isSwitch: isSwitch, lid: h.LID})
		last := &hops[len(hops)-1]
		if done, ferr := w.arrived(last); done {
			return hops, ferr
		}
		var ferr *Error
		if egress, ferr = r.egress(w, last); ferr != nil {
			return hops, ferr
		}
		last.OutPort = egress
	}
}

// egress is walk.egressFor from the switch's LinearForwardingTableRecord.
// Without SwitchInfo there is no LinearFDBTop: a block the SA has no
// record of is a LID the switch does not route.
func (r *saReader) egress(w *walk, h *Hop) (uint8, *Error) {
	dlid := w.dlid
	b, err := w.lftBlock(h.NodeGUID, h.DRPath, ibmad.LFTBlockOf(dlid))
	if err != nil {
		return 0, r.walkFail(w, err, "no route to LID %d at %s", dlid, name(h))
	}
	return forwardPort(h, b, dlid)
}

// lftBlockOf is block block of the LFT of switch guid, by the LID the
// walk knows it by.
func (r *saReader) lftBlockOf(w *walk, guid ibmad.GUID, block uint32) (*ibmad.LFTBlock, error) {
	lid := uint16(0)
	w.mu.Lock()
	for _, n := range w.nodeAt {
		if n.guid == guid && n.lid != 0 {
			lid = n.lid
			break
		}
	}
	w.mu.Unlock()
	if lid == 0 {
		return nil, fmt.Errorf("the walk knows no LID of %s", guid)
	}
	return r.lftBlock(w, lid, block)
}

// nodeAtPath is walk.nodeAtPath from the SA: the node behind the last port
// of path, from the LinkRecord of the node path's prefix leads to.
func (r *saReader) nodeAtPath(w *walk, path ibmad.DRPath) (nodeID, error) {
	if len(path) == 0 {
		return nodeID{}, fmt.Errorf("no node before the local one")
	}
	parent, ok := w.known(path[:len(path)-1])
	if !ok || parent.lid == 0 {
		return nodeID{}, fmt.Errorf("the walk knows no node at %s", path[:len(path)-1])
	}
	link, err := r.linkFrom(w, parent.lid, path[len(path)-1])
	if err != nil {
		return nodeID{}, err
	}
	n, err := r.nodeAt(w, link.toLID)
	if err != nil {
		return nodeID{}, err
	}
	id := nodeID{guid: n.ni.NodeGUID, inPort: link.toPort, isSwitch: n.ni.NodeType == ibmad.NodeTypeSwitch, lid: link.toLID, path: path}
	w.remember(path, id)
	return id, nil
}

// walkFail classifies a failed SA record query of an SA-mode walk.
func (r *saReader) walkFail(w *walk, err error, format string, a ...any) *Error {
	what := fmt.Sprintf(format, a...)
	var re *saRecordError
	switch {
	case isSALimit(err):
		return fail(StatusUnreachable, ReasonSA, err, "%s: the SA cannot answer this (%v)", what, err)
	case errors.As(err, &re) && re.st.ClassSpecific() == ibmad.SAStatusNoRecords:
		return fail(StatusUnreachable, ReasonNoRoute, err, "%s: the SA has no such record (%v)", what, err)
	case errors.As(err, &re):
		return fail(StatusUnreachable, ReasonSA, err, "%s: %v", what, err)
	case errors.Is(err, ibmad.ErrTimeout):
		return fail(StatusUnreachable, ReasonSA, err, "%s: the SA at LID %d did not answer: %v", what, w.src.SMLID, err)
	}
	return w.smpFail(err, "%s", what)
}
