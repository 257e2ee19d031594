package sim

import (
	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// PortInfo capability bits the simulated SMA advertises (IsTrapSupported,
// IsSystemImageGUIDsupported, IsExtendedSpeedsSupported,
// IsCapabilityMask2Supported, IsCommunicationManagementSupported,
// IsVendorClassSupported).
const simCapMask = 1<<3 | 1<<11 | 1<<14 | 1<<15 | 1<<16 | 1<<20

// How a switch's SMA fills LocalPortNum (NodeInfo, PortInfo) in its answer
// to a LID-routed SMP (docs/protocol.md, "Validation by the SMA"). Real
// switches name the external port the SMP arrived on; ibsim answers 0.
// Directed-route SMPs always get the arrival port. Node.localPort holds
// the switch's mode (SetSwitchLocalPortZero).
const (
	localPortFabric = 0 // as Options.SwitchLocalPortZero says
	localPortZero   = 1 // 0, as ibsim
	localPortReal   = 2 // the arrival port, as real switches
)

// answerSMP answers an SMP Get at n, which it entered through port in,
// the way a real SMA (and ibsim) does: NodeInfo.LocalPortNum and PortInfo
// modifier 0 name the ingress port. m holds the request and becomes the
// response. The caller holds the fabric's mu for reading.
func (n *Node) answerSMP(in *Port, m *ibmad.MAD) {
	meth := m.Method()
	m.SetMethod(ibmad.MethodGetResp)
	data := m.SMPData()
	status := ibmad.StatusOK
	clear(data)
	switch m.AttrID() {
	case ibmad.AttrNodeInfo:
		ni := n.nodeInfo(in)
		_ = ni.MarshalTo(data)
	case ibmad.AttrNodeDescription:
		d := ibmad.NewNodeDescription(n.Desc)
		_ = d.MarshalTo(data)
	case ibmad.AttrPortInfo:
		num := int(m.AttrMod())
		if num == 0 && !n.IsSwitch() {
			num = int(in.Num)
		}
		if num > n.NumPorts() || (num == 0 && !n.IsSwitch()) {
			status = ibmad.StatusInvalidField
			break
		}
		pi := n.portInfo(n.Ports[num], in)
		_ = pi.MarshalTo(data)
	case ibmad.AttrSwitchInfo:
		if !n.IsSwitch() {
			status = ibmad.StatusMethodAttrUnsupp
			break
		}
		si := n.switchInfo()
		_ = si.MarshalTo(data)
	case ibmad.AttrLinearForwardingTable:
		if !n.IsSwitch() {
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
			if lid < len(n.lft) {
				data[i] = n.lft[lid]
			}
		}
	case ibmad.AttrMulticastForwardingTable:
		status = ibmad.StatusMethodAttrUnsupp
		if n.IsSwitch() {
			status = n.f.mc.block(n, m.AttrMod(), data) // multicast.go
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

// answerLIDSMP answers a LID-routed SMP at n, which it entered through
// port in: as answerSMP, but a switch that models ibsim answers as if
// from port 0.
func (n *Node) answerLIDSMP(in *Port, m *ibmad.MAD) {
	if n.IsSwitch() {
		mode := n.localPort.Load()
		if mode == localPortZero || (mode == localPortFabric && n.f.opts.SwitchLocalPortZero) {
			in = n.Ports[0]
		}
	}
	n.answerSMP(in, m)
}

// nodeInfo is the NodeInfo n's SMA answers through port in.
func (n *Node) nodeInfo(in *Port) ibmad.NodeInfo {
	return ibmad.NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: n.Type, NumPorts: uint8(n.NumPorts()),
		SystemImageGUID: n.GUID, NodeGUID: n.GUID, PortGUID: n.portGUID(in.Num), PartitionCap: 64,
		DeviceID: n.DeviceID, Revision: 1, LocalPortNum: in.Num, VendorID: n.VendorID}
}

// portInfo builds PortInfo of port p of n, read through port in. The
// caller holds the fabric's mu for reading.
func (n *Node) portInfo(p, in *Port) ibmad.PortInfo {
	f := n.f
	pi := ibmad.PortInfo{
		GIDPrefix: f.opts.GIDPrefix, LID: p.LID, MasterSMLID: f.smLIDLocked(), CapabilityMask: simCapMask,
		LocalPortNum: in.Num, LinkWidthEnabled: 3, LinkWidthSupported: 3, LinkWidthActive: 2,
		LinkSpeedSupported: 7, PortState: p.State, PortPhysState: p.Phys, LinkDownDefaultState: 2,
		LMC: p.LMC, LinkSpeedActive: 4, LinkSpeedEnabled: 7, NeighborMTU: 5, VLCap: 4, VLHighLimit: 4,
		VLArbHighCap: 8, VLArbLowCap: 8, MTUCap: 5, HOQLife: 19, OperationalVLs: 4, GUIDCap: 8,
		SubnetTimeout: 18, RespTimeValue: 16, MaxCreditHint: 0, LinkSpeedExtActive: 0,
		CapabilityMask2: 1<<5 | 1<<10,
	}
	if n.IsSwitch() {
		// Only port 0 has a LID; external switch ports report the switch's.
		pi.LID, pi.LMC = n.Ports[0].LID, 0
		if p.Num == 0 {
			pi.PortState, pi.PortPhysState = ibmad.PortStateActive, ibmad.PhysStateLinkUp
		}
	}
	if n == f.sm {
		pi.CapabilityMask |= ibmad.CapIsSM
	}
	p.applyTraining(&pi)
	if p.Remote == nil && p.Num != 0 {
		pi.PortState, pi.PortPhysState = ibmad.PortStateDown, ibmad.PhysStatePolling
		pi.LinkWidthActive, pi.LinkSpeedActive = 0, 0
	}
	return pi
}

// switchInfo is the SwitchInfo of switch n. The caller holds the
// fabric's mu for reading.
func (n *Node) switchInfo() ibmad.SwitchInfo {
	return ibmad.SwitchInfo{LinearFDBCap: 0xC000, MulticastFDBCap: mftCap, LinearFDBTop: n.f.maxLID,
		LifeTimeValue: 18, PartitionEnforcementCap: 32, InboundEnforcementCap: true, OutboundEnforcementCap: true,
		FilterRawInboundCap: true, FilterRawOutboundCap: true}
}

// LinkTraining is what a link trained at, overriding the simulated SMA's
// default (4X QDR, supporting 1X/4X and SDR/DDR/QDR): the faults of a link
// trained below its capability (SetLinkTraining).
type LinkTraining struct {
	WidthActive, WidthSupported uint8 // PortInfo width bits (1 = 1X, 2 = 4X, 8 = 12X)
	SpeedActive, SpeedSupported uint8 // PortInfo legacy speed bits (1 SDR, 2 DDR, 4 QDR)
	// ExtActive and ExtSupported are the extended speed bits (1 FDR, 2
	// EDR, 4 HDR, 8 NDR); 0: none.
	ExtActive, ExtSupported uint8
}

// defaultTraining is the simulated SMA's link.
var defaultTraining = LinkTraining{WidthActive: 2, WidthSupported: 3, SpeedActive: 4, SpeedSupported: 7}

// applyTraining overrides pi's width and speed with the port's training.
func (p *Port) applyTraining(pi *ibmad.PortInfo) {
	tr := p.training.Load()
	if tr == nil || pi.PortState != ibmad.PortStateActive {
		return
	}
	pi.LinkWidthActive, pi.LinkWidthSupported, pi.LinkWidthEnabled = tr.WidthActive, tr.WidthSupported, tr.WidthSupported
	pi.LinkSpeedActive, pi.LinkSpeedSupported, pi.LinkSpeedEnabled = tr.SpeedActive, tr.SpeedSupported, tr.SpeedSupported
	pi.LinkSpeedExtActive, pi.LinkSpeedExtSupported, pi.LinkSpeedExtEnabled = tr.ExtActive, tr.ExtSupported, tr.ExtSupported
	if tr.ExtActive != 0 {
		pi.LinkSpeedActive = 0 // "see the extended speed"
	}
}
