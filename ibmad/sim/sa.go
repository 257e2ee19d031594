package sim

import (
	"math/bits"
	"sort"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

func saStatus(code uint8) ibmad.Status { return ibmad.Status(uint16(code) << 8) }

// sa answers an SA Get from t at the SM node: ClassPortInfo, PathRecord
// by DGID (and SGID), NodeRecord by any of its components, and the
// LFT/Link/PortInfo/SwitchInfo records by their keys (sa_records.go),
// with Get semantics as OpenSM has them (no match: NoRecords; several:
// TooManyRecords). GetTables of records go out with RMPP (sa_rmpp.go).
// ibmad/ibsim's TestOracleSimSAEqualsOpenSM and
// TestOracleSimSATablesEqualOpenSM check the answers against OpenSM's.
// The caller holds f.mu for reading.
func (f *Fabric) sa(t *Transport, m *ibmad.MAD) bool {
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
		if pr, st, ok := f.routedPath(&q, mask); ok { // through a router (router.go)
			if st != 0 {
				m.SetStatus(saStatus(st))
				return true
			}
			clear(data)
			_ = pr.MarshalTo(data)
			break
		}
		src, dst, st := f.pathEnds(&q, mask)
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
		f.pathQoS(&pr, dst) // pathqos.go
		clear(data)
		_ = pr.MarshalTo(data)
	default:
		found, _, _ := f.saTable(m.AttrID(), data, mask)
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

// nodeRecords returns the NodeRecords q selects with mask, as OpenSM does:
// one record per switch (port 0) and one per CA port that has a LID and
// an active link; a LID
// matches any LID of a port's LMC range; the node description compares
// like strncmp (up to the first NUL); bits that name no component (1, and
// 15 and up) are ignored, so a mask of only such bits selects every record.
func (f *Fabric) nodeRecords(q *ibmad.NodeRecord, mask uint64) []ibmad.NodeRecord {
	const (
		baseVersion, classVersion, nodeType, numPorts = 1 << 2, 1 << 3, 1 << 4, 1 << 5
		sysImageGUID, partCap, deviceID, revision     = 1 << 6, 1 << 9, 1 << 10, 1 << 11
		vendorID                                      = 1 << 13
	)
	qi := &q.NodeInfo
	var found []ibmad.NodeRecord
	for _, n := range f.nodes {
		if mask&ibmad.NRCompNodeDesc != 0 && !descEqual(ibmad.NewNodeDescription(n.Desc), q.NodeDescription) {
			continue
		}
		for _, p := range n.Ports {
			if p.LID == 0 || (n.IsSwitch() && p.Num != 0) || (!n.IsSwitch() && (p.Num == 0 || !p.linkUp())) {
				continue // OpenSM drops a CA port's record once it finds the link down
			}
			r := f.nodeRecord(n, p)
			ri := &r.NodeInfo
			switch {
			case mask&ibmad.NRCompLID != 0 && !p.hasLID(q.LID),
				mask&baseVersion != 0 && ri.BaseVersion != qi.BaseVersion,
				mask&classVersion != 0 && ri.ClassVersion != qi.ClassVersion,
				mask&nodeType != 0 && ri.NodeType != qi.NodeType,
				mask&numPorts != 0 && ri.NumPorts != qi.NumPorts,
				mask&sysImageGUID != 0 && ri.SystemImageGUID != qi.SystemImageGUID,
				mask&ibmad.NRCompNodeGUID != 0 && ri.NodeGUID != qi.NodeGUID,
				mask&ibmad.NRCompPortGUID != 0 && ri.PortGUID != qi.PortGUID,
				mask&partCap != 0 && ri.PartitionCap != qi.PartitionCap,
				mask&deviceID != 0 && ri.DeviceID != qi.DeviceID,
				mask&revision != 0 && ri.Revision != qi.Revision,
				mask&ibmad.NRCompLocalPortNum != 0 && ri.LocalPortNum != qi.LocalPortNum,
				mask&vendorID != 0 && ri.VendorID != qi.VendorID:
				continue
			}
			found = append(found, r)
		}
	}
	return found
}

// nodeRecord is the record of port p of n: its base LID, n's NodeInfo as
// seen through p, and n's description.
func (f *Fabric) nodeRecord(n *Node, p *Port) ibmad.NodeRecord {
	return ibmad.NodeRecord{LID: p.LID,
		NodeInfo: ibmad.NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: n.Type,
			NumPorts: uint8(n.NumPorts()), SystemImageGUID: n.GUID, NodeGUID: n.GUID,
			PortGUID: n.portGUID(p.Num), PartitionCap: 64, DeviceID: n.DeviceID, Revision: 1,
			LocalPortNum: p.Num, VendorID: n.VendorID},
		NodeDescription: ibmad.NewNodeDescription(n.Desc)}
}

// descEqual compares two node descriptions as strncmp does over their 64
// bytes: equal up to and including the first NUL.
func descEqual(a, b ibmad.NodeDescription) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
		if a[i] == 0 {
			return true
		}
	}
	return true
}

// pathEnds picks the two ends of a PathRecord Get as OpenSM does: SGID or
// SLID fix the source, DGID or DLID the destination; an end that is not
// given is the first port, in OpenSM's port table order, that has a path
// (a Get stops at the first record). An unknown GID or LID, or a GID of
// another subnet (no routers here), leaves no record; a GID and LID naming
// different ports make the request invalid; half a ServiceID is not
// enough components.
func (f *Fabric) pathEnds(q *ibmad.PathRecord, mask uint64) (src, dst *Port, status uint8) {
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
		order = f.osmPortOrder()
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
func (f *Fabric) osmPortOrder() []*Port {
	ps := make([]*Port, 0, len(f.portGUID))
	for _, p := range f.portGUID {
		ps = append(ps, p)
	}
	key := func(p *Port) uint64 { return bits.ReverseBytes64(uint64(p.Node.portGUID(p.Num))) }
	sort.Slice(ps, func(i, j int) bool { return key(ps[i]) < key(ps[j]) })
	return ps
}
