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
	switch attr {
	case ibmad.AttrNodeRecord:
		recs, size = table(q, mask, ibmad.NodeRecordSize, f.nodeRecords)
	case ibmad.AttrLFTRecord:
		recs, size = table(q, mask, ibmad.LFTRecordSize, f.lftRecords)
	case ibmad.AttrLinkRecord:
		recs, size = table(q, mask, ibmad.LinkRecordSize, f.linkRecords)
	case ibmad.AttrPortInfoRecord:
		recs, size = table(q, mask, ibmad.PortInfoRecordSize, f.portInfoRecords)
	case ibmad.AttrSwitchInfoRecord:
		recs, size = table(q, mask, ibmad.SwitchInfoRecordSize, f.switchInfoRecords)
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

// table decodes the query q as a T, lets sel pick the records it selects
// with mask, and marshals each into a slot of the AttributeOffset
// (8-byte units) that a record of recSize bytes takes; it returns the
// slots and that slot size.
func table[T any, P saRecord[T]](q []byte, mask uint64, recSize int, sel func(*T, uint64) []T) ([][]byte, int) {
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

// switchInfoRecords: one record per switch with a LID.
func (f *Fabric) switchInfoRecords(q *ibmad.SwitchInfoRecord, mask uint64) []ibmad.SwitchInfoRecord {
	var out []ibmad.SwitchInfoRecord
	for _, n := range f.switches {
		if mask&ibmad.SWIRCompLID != 0 && !n.Ports[0].hasLID(q.LID) || n.Ports[0].LID == 0 {
			continue
		}
		out = append(out, ibmad.SwitchInfoRecord{LID: n.Ports[0].LID, SwitchInfo: f.switchInfo(n)})
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
				mask&ibmad.LRCompToLID != 0 && r.ToLID != q.ToLID,
				f.linkLIDMasked(q, &r, mask): // a fault (sa_refusal.go)
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
