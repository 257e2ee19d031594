package sim

import (
	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// PortInfo capability bits the simulated SMA advertises (IsTrapSupported,
// IsSystemImageGUIDsupported, IsExtendedSpeedsSupported,
// IsCapabilityMask2Supported, IsCommunicationManagementSupported,
// IsVendorClassSupported).
const simCapMask = 1<<3 | 1<<11 | 1<<14 | 1<<15 | 1<<16 | 1<<20

// sma answers an SMP Get at node, which it entered through port in, the way
// a real SMA (and ibsim) does: NodeInfo.LocalPortNum and PortInfo modifier
// 0 name the ingress port. m holds the request and becomes the response.
// The caller holds f.mu for reading.
func (f *Fabric) sma(node *Node, in *Port, m *ibmad.MAD) {
	meth := m.Method()
	m.SetMethod(ibmad.MethodGetResp)
	data := m.SMPData()
	status := ibmad.StatusOK
	clear(data)
	switch m.AttrID() {
	case ibmad.AttrNodeInfo:
		ni := nodeInfo(node, in)
		_ = ni.MarshalTo(data)
	case ibmad.AttrNodeDescription:
		d := ibmad.NewNodeDescription(node.Desc)
		_ = d.MarshalTo(data)
	case ibmad.AttrPortInfo:
		num := int(m.AttrMod())
		if num == 0 && !node.IsSwitch() {
			num = int(in.Num)
		}
		if num > node.NumPorts() || (num == 0 && !node.IsSwitch()) {
			status = ibmad.StatusInvalidField
			break
		}
		pi := f.portInfo(node, node.Ports[num], in)
		_ = pi.MarshalTo(data)
	case ibmad.AttrSwitchInfo:
		if !node.IsSwitch() {
			status = ibmad.StatusMethodAttrUnsupp
			break
		}
		si := f.switchInfo(node)
		_ = si.MarshalTo(data)
	case ibmad.AttrLinearForwardingTable:
		if !node.IsSwitch() {
			status = ibmad.StatusMethodAttrUnsupp
			break
		}
		block := int(m.AttrMod())
		if block > 0xBFFF/ibmad.LFTBlockSize {
			status = ibmad.StatusInvalidField
			break
		}
		for i := 0; i < ibmad.LFTBlockSize; i++ {
			lid := block*ibmad.LFTBlockSize + i
			data[i] = ibmad.LFTNoRoute
			if lid < len(node.lft) {
				data[i] = node.lft[lid]
			}
		}
	case ibmad.AttrMulticastForwardingTable:
		status = ibmad.StatusMethodAttrUnsupp
		if node.IsSwitch() {
			status = f.mftBlock(node, m.AttrMod(), data) // mcast.go
		}
	default:
		status = ibmad.StatusMethodAttrUnsupp
	}
	if meth != ibmad.MethodGet {
		// The simulated SMA is read-only: OpenSM's Sets belong to ibsim.
		status = ibmad.StatusMethodUnsupported
	}
	m.SetStatus(status)
}

// nodeInfo is the NodeInfo node's SMA answers through port in.
func nodeInfo(node *Node, in *Port) ibmad.NodeInfo {
	return ibmad.NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: node.Type, NumPorts: uint8(node.NumPorts()),
		SystemImageGUID: node.GUID, NodeGUID: node.GUID, PortGUID: node.portGUID(in.Num), PartitionCap: 64,
		DeviceID: node.DeviceID, Revision: 1, LocalPortNum: in.Num, VendorID: node.VendorID}
}

// portInfo builds PortInfo of port p of node, read through port in.
func (f *Fabric) portInfo(node *Node, p, in *Port) ibmad.PortInfo {
	pi := ibmad.PortInfo{
		GIDPrefix: f.opts.GIDPrefix, LID: p.LID, MasterSMLID: f.smLIDLocked(), CapabilityMask: simCapMask,
		LocalPortNum: in.Num, LinkWidthEnabled: 3, LinkWidthSupported: 3, LinkWidthActive: 2,
		LinkSpeedSupported: 7, PortState: p.State, PortPhysState: p.Phys, LinkDownDefaultState: 2,
		LMC: p.LMC, LinkSpeedActive: 4, LinkSpeedEnabled: 7, NeighborMTU: 5, VLCap: 4, VLHighLimit: 4,
		VLArbHighCap: 8, VLArbLowCap: 8, MTUCap: 5, HOQLife: 19, OperationalVLs: 4, GUIDCap: 8,
		SubnetTimeout: 18, RespTimeValue: 16, MaxCreditHint: 0, LinkSpeedExtActive: 0,
		CapabilityMask2: 1<<5 | 1<<10,
	}
	if node.IsSwitch() {
		// Only port 0 has a LID; external switch ports report the switch's.
		pi.LID, pi.LMC = node.Ports[0].LID, 0
		if p.Num == 0 {
			pi.PortState, pi.PortPhysState = ibmad.PortStateActive, ibmad.PhysStateLinkUp
		}
	}
	if node == f.sm {
		pi.CapabilityMask |= ibmad.CapIsSM
	}
	p.applyTraining(&pi)
	if p.Remote == nil && p.Num != 0 {
		pi.PortState, pi.PortPhysState = ibmad.PortStateDown, ibmad.PhysStatePolling
		pi.LinkWidthActive, pi.LinkSpeedActive = 0, 0
	}
	return pi
}

// switchInfo is the SwitchInfo of switch node.
func (f *Fabric) switchInfo(node *Node) ibmad.SwitchInfo {
	return ibmad.SwitchInfo{LinearFDBCap: 0xC000, MulticastFDBCap: mftCap, LinearFDBTop: f.maxLID,
		LifeTimeValue: 18, PartitionEnforcementCap: 32, InboundEnforcementCap: true, OutboundEnforcementCap: true,
		FilterRawInboundCap: true, FilterRawOutboundCap: true}
}
