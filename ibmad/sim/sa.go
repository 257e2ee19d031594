package sim

import (
	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

func saStatus(code uint8) ibmad.Status { return ibmad.Status(uint16(code) << 8) }

// sa answers an SA request from t at the SM node: ClassPortInfo,
// PathRecord by DGID (and SGID) and NodeRecord by LID, GUID or
// description, with Get semantics as OpenSM has them (no match: NoRecords;
// several: TooManyRecords). The caller holds f.mu for reading.
func (f *Fabric) sa(t *Transport, m *ibmad.MAD) bool {
	meth := m.Method()
	m.SetMethod(ibmad.MethodGetResp)
	if meth != ibmad.MethodGet {
		m.SetStatus(ibmad.StatusMethodUnsupported)
		return true
	}
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
		if mask&ibmad.PRCompDGID == 0 && mask&ibmad.PRCompDLID == 0 {
			m.SetStatus(saStatus(ibmad.SAStatusInsufficient))
			return true
		}
		var dst *Port
		if mask&ibmad.PRCompDGID != 0 {
			if q.DGID.Prefix() != f.opts.GIDPrefix {
				m.SetStatus(saStatus(ibmad.SAStatusInvalidGID))
				return true
			}
			dst = f.portGUID[q.DGID.GUID()]
		} else if int(q.DLID) < len(f.lids) {
			dst = f.lids[q.DLID]
		}
		src := t.port
		if mask&ibmad.PRCompSGID != 0 {
			src = f.portGUID[q.SGID.GUID()]
		}
		if dst == nil || src == nil || dst.LID == 0 || src.LID == 0 || (dst.Num != 0 && !dst.linkUp()) {
			m.SetStatus(saStatus(ibmad.SAStatusNoRecords))
			return true
		}
		pr := ibmad.PathRecord{
			DGID: ibmad.MakeGID(f.opts.GIDPrefix, dst.Node.portGUID(dst.Num)),
			SGID: ibmad.MakeGID(f.opts.GIDPrefix, src.Node.portGUID(src.Num)),
			DLID: dst.LID, SLID: src.LID, Reversible: true, NumbPath: 1, PKey: 0xFFFF,
			MTUSelector: 2, MTU: 5, RateSelector: 2, Rate: 7, PacketLifeTimeSelector: 2, PacketLifeTime: 18,
		}
		clear(data)
		_ = pr.MarshalTo(data)
	case ibmad.AttrNodeRecord:
		var q ibmad.NodeRecord
		_ = q.UnmarshalBinary(data)
		var found []ibmad.NodeRecord
		for _, n := range f.nodes {
			if mask&ibmad.NRCompNodeDesc != 0 && ibmad.NewNodeDescription(n.Desc) != q.NodeDescription {
				continue
			}
			if mask&ibmad.NRCompNodeGUID != 0 && n.GUID != q.NodeInfo.NodeGUID {
				continue
			}
			for _, p := range n.Ports {
				if p.LID == 0 || (n.IsSwitch() && p.Num != 0) {
					continue
				}
				if mask&ibmad.NRCompLID != 0 && p.LID != q.LID {
					continue
				}
				if mask&ibmad.NRCompPortGUID != 0 && n.portGUID(p.Num) != q.NodeInfo.PortGUID {
					continue
				}
				found = append(found, ibmad.NodeRecord{LID: p.LID,
					NodeInfo: ibmad.NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: n.Type,
						NumPorts: uint8(n.NumPorts()), SystemImageGUID: n.GUID, NodeGUID: n.GUID,
						PortGUID: n.portGUID(p.Num), PartitionCap: 64, DeviceID: n.DeviceID, Revision: 1,
						LocalPortNum: p.Num, VendorID: n.VendorID},
					NodeDescription: ibmad.NewNodeDescription(n.Desc)})
			}
		}
		switch len(found) {
		case 0:
			m.SetStatus(saStatus(ibmad.SAStatusNoRecords))
			return true
		case 1:
			clear(data)
			_ = found[0].MarshalTo(data)
		default:
			m.SetStatus(saStatus(ibmad.SAStatusTooManyRecords))
			return true
		}
	default:
		m.SetStatus(ibmad.StatusMethodAttrUnsupp)
		return true
	}
	m.SetStatus(ibmad.StatusOK)
	return true
}
