package sim

import (
	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// saTable returns the records of attr that q (the request's SA data)
// selects with mask, each marshalled into a slot of the AttributeOffset
// OpenSM uses, and that record size. ok is false for an attribute the SA
// does not serve as a table. ibmad/ibsim's TestOracleSimSATablesEqualOpenSM
// checks the sets against OpenSM's. The caller holds f.mu for reading.
func (f *Fabric) saTable(attr ibmad.AttrID, q []byte, mask uint64) (recs [][]byte, size int, ok bool) {
	put := func(size int, m interface{ MarshalTo([]byte) error }) {
		b := make([]byte, size)
		_ = m.MarshalTo(b)
		recs = append(recs, b)
	}
	switch attr {
	case ibmad.AttrNodeRecord:
		var r ibmad.NodeRecord
		_ = r.UnmarshalBinary(q)
		size = 8 * int(ibmad.AttrOffsetOf(ibmad.NodeRecordSize))
		for _, nr := range f.nodeRecords(&r, mask) {
			put(size, &nr)
		}
	case ibmad.AttrLFTRecord:
		var r ibmad.LFTRecord
		_ = r.UnmarshalBinary(q)
		size = 8 * int(ibmad.AttrOffsetOf(ibmad.LFTRecordSize))
		for _, rec := range f.lftRecords(&r, mask) {
			put(size, &rec)
		}
	case ibmad.AttrLinkRecord:
		var r ibmad.LinkRecord
		_ = r.UnmarshalBinary(q)
		size = 8 * int(ibmad.AttrOffsetOf(ibmad.LinkRecordSize))
		for _, rec := range f.linkRecords(&r, mask) {
			put(size, &rec)
		}
	case ibmad.AttrPortInfoRecord:
		var r ibmad.PortInfoRecord
		_ = r.UnmarshalBinary(q)
		size = 8 * int(ibmad.AttrOffsetOf(ibmad.PortInfoRecordSize))
		for _, rec := range f.portInfoRecords(&r, mask) {
			put(size, &rec)
		}
	case ibmad.AttrSwitchInfoRecord:
		var r ibmad.SwitchInfoRecord
		_ = r.UnmarshalBinary(q)
		size = 8 * int(ibmad.AttrOffsetOf(ibmad.SwitchInfoRecordSize))
		for _, n := range f.switches {
			if mask&ibmad.SWIRCompLID != 0 && !n.Ports[0].hasLID(r.LID) || n.Ports[0].LID == 0 {
				continue
			}
			put(size, &ibmad.SwitchInfoRecord{LID: n.Ports[0].LID, SwitchInfo: f.switchInfo(n)})
		}
	default:
		return nil, 0, false
	}
	return recs, size, true
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
func (f *Fabric) lftRecords(q *ibmad.LFTRecord, mask uint64) []ibmad.LFTRecord {
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
func (f *Fabric) linkRecords(q *ibmad.LinkRecord, mask uint64) []ibmad.LinkRecord {
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
				mask&ibmad.LRCompToLID != 0 && r.ToLID != q.ToLID:
				continue
			}
			out = append(out, r)
		}
	}
	return out
}

// portInfoRecords: every port of a switch (0..N) and every CA port with
// a LID, with PortInfo as the SM reads it.
func (f *Fabric) portInfoRecords(q *ibmad.PortInfoRecord, mask uint64) []ibmad.PortInfoRecord {
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
			out = append(out, ibmad.PortInfoRecord{LID: lid, PortNum: p.Num, PortInfo: f.portInfo(n, p, p)})
		}
	}
	return out
}
