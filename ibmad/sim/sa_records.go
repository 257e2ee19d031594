package sim

import (
	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// table returns the records of attr that q (the request's SA data)
// selects with mask, each marshalled into a slot of the AttributeOffset
// OpenSM uses, and that record size. ok is false for an attribute the SA
// does not serve as a table. ibmad/ibsim's TestOracleSimSATablesEqualOpenSM
// checks the sets against OpenSM's. The caller holds the fabric's mu for
// reading.
func (sa *subnetAdmin) table(attr ibmad.AttrID, q []byte, mask uint64) (recs [][]byte, size int, ok bool) {
	switch attr {
	case ibmad.AttrNodeRecord:
		recs, size = marshalTable(q, mask, ibmad.NodeRecordSize, sa.nodeRecords)
	case ibmad.AttrLFTRecord:
		recs, size = marshalTable(q, mask, ibmad.LFTRecordSize, sa.lftRecords)
	case ibmad.AttrLinkRecord:
		recs, size = marshalTable(q, mask, ibmad.LinkRecordSize, sa.linkRecords)
	case ibmad.AttrPortInfoRecord:
		recs, size = marshalTable(q, mask, ibmad.PortInfoRecordSize, sa.portInfoRecords)
	case ibmad.AttrSwitchInfoRecord:
		recs, size = marshalTable(q, mask, ibmad.SwitchInfoRecordSize, sa.switchInfoRecords)
	default:
		return nil, 0, false
	}
	return recs, size, true
}

// saRecord is a pointer to an SA record type: it decodes a query and
// encodes a record.
type saRecord[T any] interface {
	*T
	UnmarshalBinary([]byte) error
	MarshalTo([]byte) error
}

// marshalTable decodes the query q as a T, lets sel pick the records it selects
// with mask, and marshals each into a slot of the AttributeOffset
// (8-byte units) that a record of recSize bytes takes; it returns the
// slots and that slot size.
func marshalTable[T any, P saRecord[T]](q []byte, mask uint64, recSize int, sel func(*T, uint64) []T) ([][]byte, int) {
	var r T
	_ = P(&r).UnmarshalBinary(q)
	size := 8 * int(ibmad.AttrOffsetOf(recSize))
	var recs [][]byte
	for _, rec := range sel(&r, mask) {
		b := make([]byte, size)
		_ = P(&rec).MarshalTo(b)
		recs = append(recs, b)
	}
	return recs, size
}

// nodeRecords returns the NodeRecords q selects with mask, as OpenSM does:
// one record per switch (port 0) and one per CA port that has a LID and
// an active link; a LID
// matches any LID of a port's LMC range; the node description compares
// like strncmp (up to the first NUL); bits that name no component (1, and
// 15 and up) are ignored, so a mask of only such bits selects every record.
func (sa *subnetAdmin) nodeRecords(q *ibmad.NodeRecord, mask uint64) []ibmad.NodeRecord {
	f := sa.f
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
			r := nodeRecord(n, p)
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
func nodeRecord(n *Node, p *Port) ibmad.NodeRecord {
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

// switchInfoRecords: one record per switch with a LID.
func (sa *subnetAdmin) switchInfoRecords(q *ibmad.SwitchInfoRecord, mask uint64) []ibmad.SwitchInfoRecord {
	f := sa.f
	var out []ibmad.SwitchInfoRecord
	for _, n := range f.switches {
		if mask&ibmad.SWIRCompLID != 0 && !n.Ports[0].hasLID(q.LID) || n.Ports[0].LID == 0 {
			continue
		}
		out = append(out, ibmad.SwitchInfoRecord{LID: n.Ports[0].LID, SwitchInfo: n.switchInfo()})
	}
	return out
}

// baseLID is the LID records name port p by: a switch's port-0 LID for
// every port of a switch, the port's own otherwise.
func baseLID(p *Port) uint16 {
	if p.Node.IsSwitch() {
		return p.Node.Ports[0].LID
	}
	return p.LID
}

// lftRecords: every 64-LID block from 0 to the fabric's top LID of every
// switch with a LID.
func (sa *subnetAdmin) lftRecords(q *ibmad.LFTRecord, mask uint64) []ibmad.LFTRecord {
	f := sa.f
	var out []ibmad.LFTRecord
	top := uint16(f.maxLID / ibmad.LFTBlockSize)
	for _, n := range f.switches {
		lid := n.Ports[0].LID
		if lid == 0 || mask&ibmad.LFTRCompLID != 0 && !n.Ports[0].hasLID(q.LID) {
			continue
		}
		for blk := uint16(0); blk <= top; blk++ {
			if mask&ibmad.LFTRCompBlock != 0 && blk != q.Block {
				continue
			}
			r := ibmad.LFTRecord{LID: lid, Block: blk}
			for i := range r.LFT {
				r.LFT[i] = ibmad.LFTNoRoute
				if l := int(blk)*ibmad.LFTBlockSize + i; l < len(n.lft) {
					r.LFT[i] = n.lft[l]
				}
			}
			out = append(out, r)
		}
	}
	return out
}

// linkRecords: one record per direction of every link that is up, named
// by the base LIDs of its ends.
func (sa *subnetAdmin) linkRecords(q *ibmad.LinkRecord, mask uint64) []ibmad.LinkRecord {
	f := sa.f
	var out []ibmad.LinkRecord
	for _, n := range f.nodes {
		for _, p := range n.Ports[1:] {
			if !p.linkUp() {
				continue
			}
			r := ibmad.LinkRecord{FromLID: baseLID(p), FromPort: p.Num, ToPort: p.Remote.Num, ToLID: baseLID(p.Remote)}
			if r.FromLID == 0 || r.ToLID == 0 {
				continue
			}
			switch {
			case mask&ibmad.LRCompFromLID != 0 && r.FromLID != q.FromLID,
				mask&ibmad.LRCompFromPort != 0 && r.FromPort != q.FromPort,
				mask&ibmad.LRCompToPort != 0 && r.ToPort != q.ToPort,
				mask&ibmad.LRCompToLID != 0 && r.ToLID != q.ToLID,
				sa.linkLIDMasked(q, &r, mask): // a fault (SARefusal)
				continue
			}
			out = append(out, r)
		}
	}
	return out
}

// portInfoRecords: every port of a switch (0..N) and every CA port with
// a LID, with PortInfo as the SM reads it.
func (sa *subnetAdmin) portInfoRecords(q *ibmad.PortInfoRecord, mask uint64) []ibmad.PortInfoRecord {
	f := sa.f
	var out []ibmad.PortInfoRecord
	for _, n := range f.nodes {
		for _, p := range n.Ports {
			if !n.IsSwitch() && (p.Num == 0 || p.LID == 0) {
				continue
			}
			lid := baseLID(p)
			if lid == 0 {
				continue
			}
			if mask&ibmad.PIRCompLID != 0 && !(n.IsSwitch() && n.Ports[0].hasLID(q.LID) || !n.IsSwitch() && p.hasLID(q.LID)) {
				continue
			}
			if mask&ibmad.PIRCompPortNum != 0 && p.Num != q.PortNum {
				continue
			}
			out = append(out, ibmad.PortInfoRecord{LID: lid, PortNum: p.Num, PortInfo: n.portInfo(p, p)})
		}
	}
	return out
}

// linkLIDMasked says whether LinkLIDMasked drops record r from the
// answer to query q: OpenSM finds the port by the LID asked, then
// compares its base LID with that LID masked with the LMC
// (docs/protocol.md, "SA-only discovery", LMC > 0).
func (sa *subnetAdmin) linkLIDMasked(q, r *ibmad.LinkRecord, mask uint64) bool {
	if !sa.refuses().LinkLIDMasked {
		return false
	}
	m := ^(uint16(1)<<(sa.f.opts.LMC&7) - 1)
	return mask&ibmad.LRCompFromLID != 0 && r.FromLID != q.FromLID&m ||
		mask&ibmad.LRCompToLID != 0 && r.ToLID != q.ToLID&m
}
