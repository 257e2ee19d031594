package sim

import (
	"math/bits"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// subnetAdmin is the SA at the SM node: it answers from the fabric's
// topology (under the fabric's mu) and owns what the SA alone decides.
type subnetAdmin struct {
	f       *Fabric
	refusal atomic.Pointer[SARefusal] // fault: what it refuses (SetSARefusal)
	rmpp    rmppSessions              // its GetTable transfers (sa_rmpp.go)

	qmu sync.RWMutex
	qos map[ibmad.GUID]PathQoS // PathRecord QoS by destination port GUID (SetPathQoS)
}

// SARefusal is what the SA refuses, as a weaker or quirkier SA than the
// default one would (a fault, for the tests of SA-only tracing's
// limits: docs/protocol.md, "SA-only discovery").
type SARefusal struct {
	// LinkLIDMasked: a LinkRecord query by FromLID or ToLID compares the
	// LID it names, masked with the CA ports' LMC (Options.LMC), with the
	// records' LIDs, as OpenSM does with the subnet's LMC: a switch whose
	// port-0 LID is not a multiple of 2^LMC is never found by its LID.
	LinkLIDMasked bool
	// NoTables: every GetTable is answered "method unsupported", with no
	// RMPP transfer (an SA that serves single-record Gets only).
	NoTables bool
}

func (sa *subnetAdmin) refuses() SARefusal {
	if r := sa.refusal.Load(); r != nil {
		return *r
	}
	return SARefusal{}
}

// PathQoS is what the SA's PathRecord to a port says beyond its LIDs and
// GIDs: the SL and the GRH fields (hop limit, traffic class, flow label).
// The SA answers 0 for each by default, as OpenSM does within one subnet.
type PathQoS struct {
	SL        uint8 // 0..15
	HopLimit  uint8
	TClass    uint8
	FlowLabel uint32 // 20 bits
}

func (sa *subnetAdmin) setPathQoS(port ibmad.GUID, q PathQoS) {
	sa.qmu.Lock()
	defer sa.qmu.Unlock()
	if sa.qos == nil {
		sa.qos = map[ibmad.GUID]PathQoS{}
	}
	q.SL &= 0xf
	q.FlowLabel &= 0xfffff
	sa.qos[port] = q
}

// pathQoS fills the QoS fields of a PathRecord to port dst.
func (sa *subnetAdmin) pathQoS(pr *ibmad.PathRecord, dst *Port) {
	sa.qmu.RLock()
	q, ok := sa.qos[dst.Node.portGUID(dst.Num)]
	sa.qmu.RUnlock()
	if ok {
		pr.SL, pr.HopLimit, pr.TClass, pr.FlowLabel = q.SL, q.HopLimit, q.TClass, q.FlowLabel
	}
}

func saStatus(code uint8) ibmad.Status { return ibmad.Status(uint16(code) << 8) }

// answer answers an SA Get from t at the SM node: ClassPortInfo, PathRecord
// by DGID (and SGID), NodeRecord by any of its components, and the
// LFT/Link/PortInfo/SwitchInfo records by their keys (sa_records.go),
// with Get semantics as OpenSM has them (no match: NoRecords; several:
// TooManyRecords). GetTables of records go out with RMPP (sa_rmpp.go).
// ibmad/ibsim's TestOracleSimSAEqualsOpenSM and
// TestOracleSimSATablesEqualOpenSM check the answers against OpenSM's.
// It reports whether it answered. The caller holds the fabric's mu for
// reading.
func (sa *subnetAdmin) answer(t *Transport, m *ibmad.MAD) bool {
	f := sa.f
	meth := m.Method()
	switch m.AttrID() {
	case ibmad.AttrClassPortInfo, ibmad.AttrPathRecord, ibmad.AttrNodeRecord,
		ibmad.AttrLFTRecord, ibmad.AttrLinkRecord, ibmad.AttrPortInfoRecord, ibmad.AttrSwitchInfoRecord:
	default:
		return false // OpenSM logs ERR 1A01 and does not answer
	}
	switch meth {
	case ibmad.MethodGet:
	case ibmad.MethodGetTable:
		// Record tables go out with RMPP (sa_rmpp.go) before this;
		// ClassPortInfo and PathRecord tables are not modelled.
		// OpenSM's error answer to a GetTable is a GetTableResp
		// (osm_sa_send_error sets the response bit of the request's
		// method): a GetResp would answer another method.
		m.SetMethod(ibmad.MethodGetTableResp)
		m.SetStatus(ibmad.StatusMethodUnsupported)
		return true
	default:
		return false // OpenSM was seen not to answer a Set; other methods it drops (ERR 1A05)
	}
	m.SetMethod(ibmad.MethodGetResp)
	data := m.SAData()
	mask := uint64(m[48])<<56 | uint64(m[49])<<48 | uint64(m[50])<<40 | uint64(m[51])<<32 |
		uint64(m[52])<<24 | uint64(m[53])<<16 | uint64(m[54])<<8 | uint64(m[55])
	switch m.AttrID() {
	case ibmad.AttrClassPortInfo:
		cpi := ibmad.ClassPortInfo{BaseVersion: 1, ClassVersion: 2, CapabilityMask: ibmad.CPICapGetSet, RespTimeValue: 18}
		clear(data)
		_ = cpi.MarshalTo(data)
	case ibmad.AttrPathRecord:
		var q ibmad.PathRecord
		_ = q.UnmarshalBinary(data)
		if pr, st, ok := sa.routedPath(&q, mask); ok { // through a router
			if st != 0 {
				m.SetStatus(saStatus(st))
				return true
			}
			clear(data)
			_ = pr.MarshalTo(data)
			break
		}
		src, dst, st := sa.pathEnds(&q, mask)
		if st != 0 {
			m.SetStatus(saStatus(st))
			return true
		}
		pr := ibmad.PathRecord{
			DGID: ibmad.MakeGID(f.opts.GIDPrefix, dst.Node.portGUID(dst.Num)),
			SGID: ibmad.MakeGID(f.opts.GIDPrefix, src.Node.portGUID(src.Num)),
			DLID: dst.LID, SLID: src.LID, Reversible: true, NumbPath: 1, PKey: 0xFFFF,
			MTUSelector: 2, MTU: 5, RateSelector: 2, Rate: 7, PacketLifeTimeSelector: 2, PacketLifeTime: 18,
		}
		sa.pathQoS(&pr, dst)
		clear(data)
		_ = pr.MarshalTo(data)
	default:
		found, _, _ := sa.table(m.AttrID(), data, mask)
		switch len(found) {
		case 0:
			m.SetStatus(saStatus(ibmad.SAStatusNoRecords))
			return true
		case 1:
			clear(data)
			copy(data, found[0])
		default:
			m.SetStatus(saStatus(ibmad.SAStatusTooManyRecords))
			return true
		}
	}
	m.SetStatus(ibmad.StatusOK)
	return true
}

// pathEnds picks the two ends of a PathRecord Get as OpenSM does: SGID or
// SLID fix the source, DGID or DLID the destination; an end that is not
// given is the first port, in OpenSM's port table order, that has a path
// (a Get stops at the first record). An unknown GID or LID, or a GID of
// another subnet (no routers here), leaves no record; a GID and LID naming
// different ports make the request invalid; half a ServiceID is not
// enough components.
func (sa *subnetAdmin) pathEnds(q *ibmad.PathRecord, mask uint64) (src, dst *Port, status uint8) {
	f := sa.f
	const serviceID = 1<<0 | 1<<1
	if m := mask & serviceID; m != 0 && m != serviceID {
		return nil, nil, ibmad.SAStatusInsufficient
	}
	byGID := func(g ibmad.GID) *Port {
		if p := g.Prefix(); p != f.opts.GIDPrefix && p&0xFFC0_0000_0000_0000 != 0xFE80_0000_0000_0000 {
			return nil
		}
		return f.portGUID[g.GUID()]
	}
	byLID := func(lid uint16) *Port {
		if int(lid) < len(f.lids) {
			return f.lids[lid]
		}
		return nil
	}
	end := func(gidBit, lidBit uint64, g ibmad.GID, lid uint16) (*Port, uint8) {
		var byG, byL *Port
		if mask&gidBit != 0 {
			if byG = byGID(g); byG == nil {
				return nil, ibmad.SAStatusNoRecords
			}
		}
		if mask&lidBit != 0 {
			if byL = byLID(lid); byL == nil {
				return nil, ibmad.SAStatusNoRecords
			}
		}
		switch {
		case byG != nil && byL != nil && byG != byL:
			return nil, ibmad.SAStatusReqInvalid
		case byG != nil:
			return byG, 0
		}
		return byL, 0
	}
	if src, status = end(ibmad.PRCompSGID, ibmad.PRCompSLID, q.SGID, q.SLID); status != 0 {
		return nil, nil, status
	}
	if dst, status = end(ibmad.PRCompDGID, ibmad.PRCompDLID, q.DGID, q.DLID); status != 0 {
		return nil, nil, status
	}
	usable := func(p *Port) bool { return p != nil && p.LID != 0 && (p.Num == 0 || p.linkUp()) }
	var order []*Port
	if src == nil || dst == nil {
		order = sa.osmPortOrder()
	}
	for _, s := range pick(src, order) {
		for _, d := range pick(dst, order) {
			if usable(s) && usable(d) {
				return s, d, 0
			}
		}
	}
	return nil, nil, ibmad.SAStatusNoRecords
}

func pick(p *Port, all []*Port) []*Port {
	if p != nil {
		return []*Port{p}
	}
	return all
}

// osmPortOrder lists every port that has a GUID of its own (switch port 0,
// CA ports) in the order OpenSM's port GUID table iterates on a
// little-endian host: by the GUID's network-order bytes read as a
// little-endian number.
func (sa *subnetAdmin) osmPortOrder() []*Port {
	f := sa.f
	ps := make([]*Port, 0, len(f.portGUID))
	for _, p := range f.portGUID {
		ps = append(ps, p)
	}
	key := func(p *Port) uint64 { return bits.ReverseBytes64(uint64(p.Node.portGUID(p.Num))) }
	sort.Slice(ps, func(i, j int) bool { return key(ps[i]) < key(ps[j]) })
	return ps
}

// routedPath answers a PathRecord Get between a port of this subnet and
// a GID of a subnet a router reaches, as the openib-general routing
// discussion has each subnet's SA do (docs/protocol.md): the record runs
// from the local port to the foreign GID, its DLID is the router port's
// LID, and its hop limit above 1 says a GRH is needed. The local port is
// the one the request's SGID (or SLID) or DGID names, whichever is
// local. ok is false when neither end is a foreign GID this subnet has a
// router for (the ordinary answer applies). The caller holds the
// fabric's mu for reading.
func (sa *subnetAdmin) routedPath(q *ibmad.PathRecord, mask uint64) (pr ibmad.PathRecord, status uint8, ok bool) {
	f := sa.f
	foreign := func(bit uint64, g ibmad.GID) *Router {
		if mask&bit == 0 || g.Prefix() == f.opts.GIDPrefix || g.Prefix()&0xFFC0_0000_0000_0000 == 0xFE80_0000_0000_0000 {
			return nil
		}
		return f.routerFor(g.Prefix())
	}
	var local *Port
	var remote ibmad.GID
	r := foreign(ibmad.PRCompDGID, q.DGID)
	switch {
	case r != nil:
		remote = q.DGID
		local = sa.localEnd(q.SGID, q.SLID, mask&ibmad.PRCompSGID != 0, mask&ibmad.PRCompSLID != 0)
	default:
		if r = foreign(ibmad.PRCompSGID, q.SGID); r == nil {
			return pr, 0, false
		}
		// A source in another subnet: OpenSM answers "invalid GID"
		// (non-local SGID subnet prefix); the path back is asked with
		// the SGID in this subnet (docs/protocol.md, "Paths that leave
		// the subnet").
		return pr, ibmad.SAStatusInvalidGID, true
	}
	rp := r.Port(f)
	if local == nil || local.LID == 0 || !(local.Num == 0 || local.linkUp()) || rp == nil || rp.LID == 0 || !rp.linkUp() {
		return pr, ibmad.SAStatusNoRecords, true
	}
	pr = ibmad.PathRecord{
		SGID: ibmad.MakeGID(f.opts.GIDPrefix, local.Node.portGUID(local.Num)), DGID: remote,
		SLID: local.LID, DLID: rp.LID, HopLimit: routedHopLimit, Reversible: true, NumbPath: 1, PKey: 0xFFFF,
		MTUSelector: 2, MTU: 5, RateSelector: 2, Rate: 7, PacketLifeTimeSelector: 2, PacketLifeTime: 18,
	}
	sa.pathQoS(&pr, rp) // the SL and GRH fields SetPathQoS gives the router port
	return pr, 0, true
}

// localEnd is the local port a GID or LID names (the GID first), or nil.
func (sa *subnetAdmin) localEnd(g ibmad.GID, lid uint16, byGID, byLID bool) *Port {
	f := sa.f
	switch {
	case byGID:
		if g.Prefix() != f.opts.GIDPrefix && g.Prefix()&0xFFC0_0000_0000_0000 != 0xFE80_0000_0000_0000 {
			return nil
		}
		return f.portGUID[g.GUID()]
	case byLID && int(lid) < len(f.lids):
		return f.lids[lid]
	}
	return nil
}
