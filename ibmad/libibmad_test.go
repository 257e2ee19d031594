//go:build cgo && ibcref

// Cross-check of every attribute codec against libibmad's field table
// (Debian libibmad-dev), through the test-only cgo bridge in
// internal/cmadref. For every attribute, 1,000 random 256-byte buffers are
// decoded by both; every field libibmad knows must agree, and encoding the
// decoded values must give the same bytes wherever libibmad has a field.

package ibmad_test

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	c "github.com/ibtracer/ibtracer_exporter/ibmad/internal/cmadref"
)

// field is a libibmad field id and its width: 0 for fields of up to 32
// bits, 8 for 64-bit fields, n > 8 for n-byte arrays.
type field struct {
	id, bytes int
	name      string
}

type val struct {
	u uint64
	a []byte
}

type attrCase struct {
	name   string
	span   int          // bytes compared after encoding
	fixup  func([]byte) // makes a random buffer acceptable (class byte)
	fields []field
	ours   func(b []byte) (map[int]val, []byte, error)
}

func u(v uint64) val { return val{u: v} }
func a(b []byte) val { return val{a: append([]byte(nil), b...)} }
func bv(b bool) val {
	if b {
		return val{u: 1}
	}
	return val{u: 0}
}

func f(id int, name string) field     { return field{id: id, name: name} }
func f64(id int, name string) field   { return field{id: id, bytes: 8, name: name} }
func fa(id, n int, name string) field { return field{id: id, bytes: n, name: name} }

func cases() []attrCase {
	return []attrCase{
		{
			name: "Header", span: 24,
			fields: []field{f(c.MAD_METHOD, "Method"), f(c.MAD_RESPONSE, "Response"), f(c.MAD_CLASSVER, "ClassVersion"),
				f(c.MAD_MGMTCLASS, "MgmtClass"), f(c.MAD_BASEVER, "BaseVersion"), f(c.MAD_STATUS, "Status"),
				f64(c.MAD_TRID, "TID"), f(c.MAD_ATTRID, "AttrID"), f(c.MAD_ATTRMOD, "AttrMod")},
			ours: func(b []byte) (map[int]val, []byte, error) {
				var h ibmad.Header
				if err := h.UnmarshalBinary(b); err != nil {
					return nil, nil, err
				}
				out := make([]byte, 256)
				err := h.MarshalTo(out)
				return map[int]val{c.MAD_METHOD: u(uint64(h.Method & 0x7f)), c.MAD_RESPONSE: u(uint64(h.Method >> 7)),
					c.MAD_CLASSVER: u(uint64(h.ClassVersion)), c.MAD_MGMTCLASS: u(uint64(h.MgmtClass)),
					c.MAD_BASEVER: u(uint64(h.BaseVersion)), c.MAD_STATUS: u(uint64(h.Status)), c.MAD_TRID: u(h.TID),
					c.MAD_ATTRID: u(uint64(h.AttrID)), c.MAD_ATTRMOD: u(uint64(h.AttrMod))}, out, err
			},
		},
		{
			name: "DirectedRouteSMP", span: 256, fixup: func(b []byte) { b[1] = 0x81 },
			fields: []field{f(c.DRSMP_HOPCNT, "HopCount"), f(c.DRSMP_HOPPTR, "HopPointer"), f(c.DRSMP_STATUS, "Status"),
				f(c.DRSMP_DIRECTION, "Direction"), f(c.DRSMP_DRDLID, "DrDLID"), f(c.DRSMP_DRSLID, "DrSLID"),
				fa(c.DRSMP_PATH, 64, "InitialPath"), fa(c.DRSMP_RPATH, 64, "ReturnPath"), f64(c.MAD_MKEY, "MKey"),
				f(c.MAD_ATTRID, "AttrID"), f64(c.MAD_TRID, "TID")},
			ours: func(b []byte) (map[int]val, []byte, error) {
				var s ibmad.SMP
				if err := s.UnmarshalBinary(b); err != nil {
					return nil, nil, err
				}
				out := make([]byte, 256)
				err := s.MarshalTo(out)
				return map[int]val{c.DRSMP_HOPCNT: u(uint64(s.HopCount)), c.DRSMP_HOPPTR: u(uint64(s.HopPointer)),
					c.DRSMP_STATUS: u(uint64(s.Status)), c.DRSMP_DIRECTION: bv(s.Direction),
					c.DRSMP_DRDLID: u(uint64(s.DrDLID)), c.DRSMP_DRSLID: u(uint64(s.DrSLID)),
					c.DRSMP_PATH: a(s.InitialPath[:]), c.DRSMP_RPATH: a(s.ReturnPath[:]), c.MAD_MKEY: u(s.MKey),
					c.MAD_ATTRID: u(uint64(s.AttrID)), c.MAD_TRID: u(s.TID)}, out, err
			},
		},
		{
			name: "SAHeader", span: 56, fixup: func(b []byte) { b[1] = 0x03 },
			fields: []field{f64(c.SA_MKEY, "SMKey"), f(c.SA_ATTROFFS, "AttrOffset"), f64(c.SA_COMPMASK, "ComponentMask"),
				f(c.SA_RMPP_VERS, "RMPPVersion"), f(c.SA_RMPP_TYPE, "RMPPType"), f(c.SA_RMPP_RESP, "RRespTime"),
				f(c.SA_RMPP_FLAGS, "RMPPFlags"), f(c.SA_RMPP_STATUS, "RMPPStatus"), f(c.SA_RMPP_D1, "Data1"),
				f(c.SA_RMPP_D2, "Data2")},
			ours: func(b []byte) (map[int]val, []byte, error) {
				var s ibmad.SAMAD
				if err := s.UnmarshalBinary(b); err != nil {
					return nil, nil, err
				}
				out := make([]byte, 256)
				err := s.MarshalTo(out)
				return map[int]val{c.SA_MKEY: u(s.SMKey), c.SA_ATTROFFS: u(uint64(s.AttrOffset)),
					c.SA_COMPMASK: u(s.ComponentMask), c.SA_RMPP_VERS: u(uint64(s.RMPP.Version)),
					c.SA_RMPP_TYPE: u(uint64(s.RMPP.Type)), c.SA_RMPP_RESP: u(uint64(s.RMPP.RespTime)),
					c.SA_RMPP_FLAGS: u(uint64(s.RMPP.Flags)), c.SA_RMPP_STATUS: u(uint64(s.RMPP.Status)),
					c.SA_RMPP_D1: u(uint64(s.RMPP.Data1)), c.SA_RMPP_D2: u(uint64(s.RMPP.Data2))}, out, err
			},
		},
		{
			name: "VendorRange2", span: 40, fixup: func(b []byte) { b[1] = 0x30 },
			fields: []field{f(c.VEND2_OUI, "OUI")},
			ours: func(b []byte) (map[int]val, []byte, error) {
				var v ibmad.VendorMAD
				if err := v.UnmarshalBinary(b); err != nil {
					return nil, nil, err
				}
				out := make([]byte, 256)
				err := v.MarshalTo(out)
				return map[int]val{c.VEND2_OUI: u(uint64(v.OUI))}, out, err
			},
		},
		{
			name: "NodeInfo", span: ibmad.NodeInfoSize,
			fields: []field{f(c.NODE_BASE_VERS, "BaseVersion"), f(c.NODE_CLASS_VERS, "ClassVersion"), f(c.NODE_TYPE, "NodeType"),
				f(c.NODE_NPORTS, "NumPorts"), f64(c.NODE_SYSTEM_GUID, "SystemImageGUID"), f64(c.NODE_GUID, "NodeGUID"),
				f64(c.NODE_PORT_GUID, "PortGUID"), f(c.NODE_PARTITION_CAP, "PartitionCap"), f(c.NODE_DEVID, "DeviceID"),
				f(c.NODE_REVISION, "Revision"), f(c.NODE_LOCAL_PORT, "LocalPortNum"), f(c.NODE_VENDORID, "VendorID")},
			ours: func(b []byte) (map[int]val, []byte, error) {
				var n ibmad.NodeInfo
				if err := n.UnmarshalBinary(b); err != nil {
					return nil, nil, err
				}
				out, err := n.MarshalBinary()
				return nodeInfoVals(&n, c.NODE_BASE_VERS, c.NODE_CLASS_VERS, c.NODE_TYPE, c.NODE_NPORTS, c.NODE_SYSTEM_GUID,
					c.NODE_GUID, c.NODE_PORT_GUID, c.NODE_PARTITION_CAP, c.NODE_DEVID, c.NODE_REVISION, c.NODE_LOCAL_PORT,
					c.NODE_VENDORID), out, err
			},
		},
		{
			name: "NodeDescription", span: 64,
			fields: []field{fa(c.NODE_DESC, 64, "NodeDescription")},
			ours: func(b []byte) (map[int]val, []byte, error) {
				var d ibmad.NodeDescription
				if err := d.UnmarshalBinary(b); err != nil {
					return nil, nil, err
				}
				out := make([]byte, 64)
				err := d.MarshalTo(out)
				return map[int]val{c.NODE_DESC: a(d[:])}, out, err
			},
		},
		portInfoCase(),
		{
			name: "SwitchInfo", span: ibmad.SwitchInfoSize,
			fields: []field{f(c.SW_LINEAR_FDB_CAP, "LinearFDBCap"), f(c.SW_RANDOM_FDB_CAP, "RandomFDBCap"),
				f(c.SW_MCAST_FDB_CAP, "MulticastFDBCap"), f(c.SW_LINEAR_FDB_TOP, "LinearFDBTop"), f(c.SW_DEF_PORT, "DefaultPort"),
				f(c.SW_DEF_MCAST_PRIM, "DefaultMulticastPrimaryPort"), f(c.SW_DEF_MCAST_NOT_PRIM, "DefaultMulticastNotPrimaryPort"),
				f(c.SW_LIFE_TIME, "LifeTimeValue"), f(c.SW_STATE_CHANGE, "PortStateChange"),
				f(c.SW_OPT_SLTOVL_MAPPING, "OptimizedSLtoVLMapping"), f(c.SW_LIDS_PER_PORT, "LIDsPerPort"),
				f(c.SW_PARTITION_ENFORCE_CAP, "PartitionEnforcementCap"), f(c.SW_PARTITION_ENF_INB, "InboundEnforcementCap"),
				f(c.SW_PARTITION_ENF_OUTB, "OutboundEnforcementCap"), f(c.SW_FILTER_RAW_INB, "FilterRawInboundCap"),
				f(c.SW_FILTER_RAW_OUTB, "FilterRawOutboundCap"), f(c.SW_ENHANCED_PORT0, "EnhancedPort0"),
				f(c.SW_MCAST_FDB_TOP, "MulticastFDBTop")},
			ours: func(b []byte) (map[int]val, []byte, error) {
				var s ibmad.SwitchInfo
				if err := s.UnmarshalBinary(b); err != nil {
					return nil, nil, err
				}
				out, err := s.MarshalBinary()
				return map[int]val{c.SW_LINEAR_FDB_CAP: u(uint64(s.LinearFDBCap)), c.SW_RANDOM_FDB_CAP: u(uint64(s.RandomFDBCap)),
					c.SW_MCAST_FDB_CAP: u(uint64(s.MulticastFDBCap)), c.SW_LINEAR_FDB_TOP: u(uint64(s.LinearFDBTop)),
					c.SW_DEF_PORT: u(uint64(s.DefaultPort)), c.SW_DEF_MCAST_PRIM: u(uint64(s.DefaultMulticastPrimaryPort)),
					c.SW_DEF_MCAST_NOT_PRIM: u(uint64(s.DefaultMulticastNotPrimaryPort)), c.SW_LIFE_TIME: u(uint64(s.LifeTimeValue)),
					c.SW_STATE_CHANGE: bv(s.PortStateChange), c.SW_OPT_SLTOVL_MAPPING: u(uint64(s.OptimizedSLtoVLMapping)),
					c.SW_LIDS_PER_PORT: u(uint64(s.LIDsPerPort)), c.SW_PARTITION_ENFORCE_CAP: u(uint64(s.PartitionEnforcementCap)),
					c.SW_PARTITION_ENF_INB: bv(s.InboundEnforcementCap), c.SW_PARTITION_ENF_OUTB: bv(s.OutboundEnforcementCap),
					c.SW_FILTER_RAW_INB: bv(s.FilterRawInboundCap), c.SW_FILTER_RAW_OUTB: bv(s.FilterRawOutboundCap),
					c.SW_ENHANCED_PORT0: bv(s.EnhancedPort0), c.SW_MCAST_FDB_TOP: u(uint64(s.MulticastFDBTop))}, out, err
			},
		},
		{
			name: "LinearForwardingTable", span: 64,
			fields: []field{fa(c.LINEAR_FORW_TBL, 64, "LFTBlock")},
			ours: func(b []byte) (map[int]val, []byte, error) {
				var l ibmad.LFTBlock
				if err := l.UnmarshalBinary(b); err != nil {
					return nil, nil, err
				}
				out := make([]byte, 64)
				err := l.MarshalTo(out)
				return map[int]val{c.LINEAR_FORW_TBL: a(l[:])}, out, err
			},
		},
		{
			name: "MulticastForwardingTable", span: 64,
			fields: []field{fa(c.MULTICAST_FORW_TBL, 64, "MFTBlock")},
			ours: func(b []byte) (map[int]val, []byte, error) {
				var m ibmad.MFTBlock
				if err := m.UnmarshalBinary(b); err != nil {
					return nil, nil, err
				}
				out := make([]byte, 64)
				err := m.MarshalTo(out)
				raw := make([]byte, 64)
				for i, v := range m {
					binary.BigEndian.PutUint16(raw[2*i:], v)
				}
				return map[int]val{c.MULTICAST_FORW_TBL: a(raw)}, out, err
			},
		},
		classPortInfoCase(),
		{
			name: "PathRecord", span: ibmad.PathRecordSize,
			fields: []field{fa(c.SA_PR_DGID, 16, "DGID"), fa(c.SA_PR_SGID, 16, "SGID"), f(c.SA_PR_DLID, "DLID"),
				f(c.SA_PR_SLID, "SLID"), f(c.SA_PR_NPATH, "NumbPath"), f(c.SA_PR_SL, "SL")},
			ours: func(b []byte) (map[int]val, []byte, error) {
				var p ibmad.PathRecord
				if err := p.UnmarshalBinary(b); err != nil {
					return nil, nil, err
				}
				out, err := p.MarshalBinary()
				return map[int]val{c.SA_PR_DGID: a(p.DGID[:]), c.SA_PR_SGID: a(p.SGID[:]), c.SA_PR_DLID: u(uint64(p.DLID)),
					c.SA_PR_SLID: u(uint64(p.SLID)), c.SA_PR_NPATH: u(uint64(p.NumbPath)), c.SA_PR_SL: u(uint64(p.SL))}, out, err
			},
		},
		{
			name: "NodeRecord", span: ibmad.NodeRecordSize,
			fields: []field{f(c.SA_NR_LID, "LID"), f(c.SA_NR_BASEVER, "BaseVersion"), f(c.SA_NR_CLASSVER, "ClassVersion"),
				f(c.SA_NR_TYPE, "NodeType"), f(c.SA_NR_NPORTS, "NumPorts"), f64(c.SA_NR_SYSTEM_GUID, "SystemImageGUID"),
				f64(c.SA_NR_GUID, "NodeGUID"), f64(c.SA_NR_PORT_GUID, "PortGUID"), f(c.SA_NR_PARTITION_CAP, "PartitionCap"),
				f(c.SA_NR_DEVID, "DeviceID"), f(c.SA_NR_REVISION, "Revision"), f(c.SA_NR_LOCAL_PORT, "LocalPortNum"),
				f(c.SA_NR_VENDORID, "VendorID"), fa(c.SA_NR_NODEDESC, 64, "NodeDescription")},
			ours: func(b []byte) (map[int]val, []byte, error) {
				var n ibmad.NodeRecord
				if err := n.UnmarshalBinary(b); err != nil {
					return nil, nil, err
				}
				out, err := n.MarshalBinary()
				m := nodeInfoVals(&n.NodeInfo, c.SA_NR_BASEVER, c.SA_NR_CLASSVER, c.SA_NR_TYPE, c.SA_NR_NPORTS,
					c.SA_NR_SYSTEM_GUID, c.SA_NR_GUID, c.SA_NR_PORT_GUID, c.SA_NR_PARTITION_CAP, c.SA_NR_DEVID,
					c.SA_NR_REVISION, c.SA_NR_LOCAL_PORT, c.SA_NR_VENDORID)
				m[c.SA_NR_LID] = u(uint64(n.LID))
				m[c.SA_NR_NODEDESC] = a(n.NodeDescription[:])
				return m, out, err
			},
		},
		portCountersCase(),
		portCountersExtCase(),
		vlXmitWaitCase(),                                                                           // vlxmitwait_cgo_test.go
		rcvErrorDetailsCase(), xmitDiscardDetailsCase(), extSpeedsCase(false), extSpeedsCase(true), // pmdetails_cgo_test.go
	}
}

func nodeInfoVals(n *ibmad.NodeInfo, ids ...int) map[int]val {
	vs := []val{u(uint64(n.BaseVersion)), u(uint64(n.ClassVersion)), u(uint64(n.NodeType)), u(uint64(n.NumPorts)),
		u(uint64(n.SystemImageGUID)), u(uint64(n.NodeGUID)), u(uint64(n.PortGUID)), u(uint64(n.PartitionCap)),
		u(uint64(n.DeviceID)), u(uint64(n.Revision)), u(uint64(n.LocalPortNum)), u(uint64(n.VendorID))}
	m := map[int]val{}
	for i, id := range ids {
		m[id] = vs[i]
	}
	return m
}

func portInfoCase() attrCase {
	ids := []field{f64(c.PORT_MKEY, "MKey"), f64(c.PORT_GID_PREFIX, "GIDPrefix"), f(c.PORT_LID, "LID"), f(c.PORT_SMLID, "MasterSMLID"),
		f(c.PORT_CAPMASK, "CapabilityMask"), f(c.PORT_DIAG, "DiagCode"), f(c.PORT_MKEY_LEASE, "MKeyLeasePeriod"),
		f(c.PORT_LOCAL_PORT, "LocalPortNum"), f(c.PORT_LINK_WIDTH_ENABLED, "LinkWidthEnabled"),
		f(c.PORT_LINK_WIDTH_SUPPORTED, "LinkWidthSupported"), f(c.PORT_LINK_WIDTH_ACTIVE, "LinkWidthActive"),
		f(c.PORT_LINK_SPEED_SUPPORTED, "LinkSpeedSupported"), f(c.PORT_STATE, "PortState"), f(c.PORT_PHYS_STATE, "PortPhysState"),
		f(c.PORT_LINK_DOWN_DEF, "LinkDownDefaultState"), f(c.PORT_MKEY_PROT_BITS, "MKeyProtectBits"), f(c.PORT_LMC, "LMC"),
		f(c.PORT_LINK_SPEED_ACTIVE, "LinkSpeedActive"), f(c.PORT_LINK_SPEED_ENABLED, "LinkSpeedEnabled"),
		f(c.PORT_NEIGHBOR_MTU, "NeighborMTU"), f(c.PORT_SMSL, "MasterSMSL"), f(c.PORT_VL_CAP, "VLCap"),
		f(c.PORT_INIT_TYPE, "InitType"), f(c.PORT_VL_HIGH_LIMIT, "VLHighLimit"), f(c.PORT_VL_ARBITRATION_HIGH_CAP, "VLArbHighCap"),
		f(c.PORT_VL_ARBITRATION_LOW_CAP, "VLArbLowCap"), f(c.PORT_INIT_TYPE_REPLY, "InitTypeReply"), f(c.PORT_MTU_CAP, "MTUCap"),
		f(c.PORT_VL_STALL_COUNT, "VLStallCount"), f(c.PORT_HOQ_LIFE, "HOQLife"), f(c.PORT_OPER_VLS, "OperationalVLs"),
		f(c.PORT_PART_EN_INB, "PartEnforceInbound"), f(c.PORT_PART_EN_OUTB, "PartEnforceOutbound"),
		f(c.PORT_FILTER_RAW_INB, "FilterRawInbound"), f(c.PORT_FILTER_RAW_OUTB, "FilterRawOutbound"),
		f(c.PORT_MKEY_VIOL, "MKeyViolations"), f(c.PORT_PKEY_VIOL, "PKeyViolations"), f(c.PORT_QKEY_VIOL, "QKeyViolations"),
		f(c.PORT_GUID_CAP, "GUIDCap"), f(c.PORT_CLIENT_REREG, "ClientReregister"),
		f(c.PORT_MCAST_PKEY_SUPR_ENAB, "McastPKeyTrapSuppress"), f(c.PORT_SUBN_TIMEOUT, "SubnetTimeout"),
		f(c.PORT_RESP_TIME_VAL, "RespTimeValue"), f(c.PORT_LOCAL_PHYS_ERR, "LocalPhyErrors"), f(c.PORT_OVERRUN_ERR, "OverrunErrors"),
		f(c.PORT_MAX_CREDIT_HINT, "MaxCreditHint"), f(c.PORT_LINK_ROUND_TRIP, "LinkRoundTripLatency"),
		f(c.PORT_CAPMASK2, "CapabilityMask2"), f(c.PORT_LINK_SPEED_EXT_ACTIVE, "LinkSpeedExtActive"),
		f(c.PORT_LINK_SPEED_EXT_SUPPORTED, "LinkSpeedExtSupported"), f(c.PORT_LINK_SPEED_EXT_ENABLED, "LinkSpeedExtEnabled")}
	return attrCase{
		name: "PortInfo", span: ibmad.PortInfoSize, fields: ids,
		ours: func(b []byte) (map[int]val, []byte, error) {
			var p ibmad.PortInfo
			if err := p.UnmarshalBinary(b); err != nil {
				return nil, nil, err
			}
			out, err := p.MarshalBinary()
			vs := []val{u(p.MKey), u(p.GIDPrefix), u(uint64(p.LID)), u(uint64(p.MasterSMLID)), u(uint64(p.CapabilityMask)),
				u(uint64(p.DiagCode)), u(uint64(p.MKeyLeasePeriod)), u(uint64(p.LocalPortNum)), u(uint64(p.LinkWidthEnabled)),
				u(uint64(p.LinkWidthSupported)), u(uint64(p.LinkWidthActive)), u(uint64(p.LinkSpeedSupported)),
				u(uint64(p.PortState)), u(uint64(p.PortPhysState)), u(uint64(p.LinkDownDefaultState)), u(uint64(p.MKeyProtectBits)),
				u(uint64(p.LMC)), u(uint64(p.LinkSpeedActive)), u(uint64(p.LinkSpeedEnabled)), u(uint64(p.NeighborMTU)),
				u(uint64(p.MasterSMSL)), u(uint64(p.VLCap)), u(uint64(p.InitType)), u(uint64(p.VLHighLimit)),
				u(uint64(p.VLArbHighCap)), u(uint64(p.VLArbLowCap)), u(uint64(p.InitTypeReply)), u(uint64(p.MTUCap)),
				u(uint64(p.VLStallCount)), u(uint64(p.HOQLife)), u(uint64(p.OperationalVLs)), bv(p.PartEnforceInbound),
				bv(p.PartEnforceOutbound), bv(p.FilterRawInbound), bv(p.FilterRawOutbound), u(uint64(p.MKeyViolations)),
				u(uint64(p.PKeyViolations)), u(uint64(p.QKeyViolations)), u(uint64(p.GUIDCap)), bv(p.ClientReregister),
				u(uint64(p.McastPKeyTrapSuppress)), u(uint64(p.SubnetTimeout)), u(uint64(p.RespTimeValue)),
				u(uint64(p.LocalPhyErrors)), u(uint64(p.OverrunErrors)), u(uint64(p.MaxCreditHint)),
				u(uint64(p.LinkRoundTripLatency)), u(uint64(p.CapabilityMask2)), u(uint64(p.LinkSpeedExtActive)),
				u(uint64(p.LinkSpeedExtSupported)), u(uint64(p.LinkSpeedExtEnabled))}
			m := map[int]val{}
			for i, fl := range ids {
				m[fl.id] = vs[i]
			}
			return m, out, err
		},
	}
}

func classPortInfoCase() attrCase {
	ids := []field{f(c.CPI_BASEVER, "BaseVersion"), f(c.CPI_CLASSVER, "ClassVersion"), f(c.CPI_CAPMASK, "CapabilityMask"),
		f(c.CPI_CAPMASK2, "CapabilityMask2"), f(c.CPI_RESP_TIME_VALUE, "RespTimeValue"), fa(c.CPI_REDIRECT_GID, 16, "RedirectGID"),
		f(c.CPI_REDIRECT_TC, "RedirectTC"), f(c.CPI_REDIRECT_SL, "RedirectSL"), f(c.CPI_REDIRECT_FL, "RedirectFL"),
		f(c.CPI_REDIRECT_LID, "RedirectLID"), f(c.CPI_REDIRECT_PKEY, "RedirectPKey"), f(c.CPI_REDIRECT_QP, "RedirectQP"),
		f(c.CPI_REDIRECT_QKEY, "RedirectQKey"), fa(c.CPI_TRAP_GID, 16, "TrapGID"), f(c.CPI_TRAP_TC, "TrapTC"),
		f(c.CPI_TRAP_SL, "TrapSL"), f(c.CPI_TRAP_FL, "TrapFL"), f(c.CPI_TRAP_LID, "TrapLID"), f(c.CPI_TRAP_PKEY, "TrapPKey"),
		f(c.CPI_TRAP_HL, "TrapHL"), f(c.CPI_TRAP_QP, "TrapQP"), f(c.CPI_TRAP_QKEY, "TrapQKey")}
	return attrCase{
		name: "ClassPortInfo", span: ibmad.ClassPortInfoSize, fields: ids,
		ours: func(b []byte) (map[int]val, []byte, error) {
			var p ibmad.ClassPortInfo
			if err := p.UnmarshalBinary(b); err != nil {
				return nil, nil, err
			}
			out, err := p.MarshalBinary()
			vs := []val{u(uint64(p.BaseVersion)), u(uint64(p.ClassVersion)), u(uint64(p.CapabilityMask)),
				u(uint64(p.CapabilityMask2)), u(uint64(p.RespTimeValue)), a(p.RedirectGID[:]), u(uint64(p.RedirectTC)),
				u(uint64(p.RedirectSL)), u(uint64(p.RedirectFL)), u(uint64(p.RedirectLID)), u(uint64(p.RedirectPKey)),
				u(uint64(p.RedirectQP)), u(uint64(p.RedirectQKey)), a(p.TrapGID[:]), u(uint64(p.TrapTC)), u(uint64(p.TrapSL)),
				u(uint64(p.TrapFL)), u(uint64(p.TrapLID)), u(uint64(p.TrapPKey)), u(uint64(p.TrapHL)), u(uint64(p.TrapQP)),
				u(uint64(p.TrapQKey))}
			m := map[int]val{}
			for i, fl := range ids {
				m[fl.id] = vs[i]
			}
			return m, out, err
		},
	}
}

func portCountersCase() attrCase {
	// IB_PC_QP1_DROP_F is left out: libibmad places it on VL15Dropped's
	// bytes (docs/protocol.md); TestLibibmadQP1DroppedBug covers it.
	ids := []field{f(c.PC_PORT_SELECT, "PortSelect"), f(c.PC_COUNTER_SELECT, "CounterSelect"), f(c.PC_ERR_SYM, "SymbolErrorCounter"),
		f(c.PC_LINK_RECOVERS, "LinkErrorRecoveryCounter"), f(c.PC_LINK_DOWNED, "LinkDownedCounter"), f(c.PC_ERR_RCV, "PortRcvErrors"),
		f(c.PC_ERR_PHYSRCV, "PortRcvRemotePhysicalErrors"), f(c.PC_ERR_SWITCH_REL, "PortRcvSwitchRelayErrors"),
		f(c.PC_XMT_DISCARDS, "PortXmitDiscards"), f(c.PC_ERR_XMTCONSTR, "PortXmitConstraintErrors"),
		f(c.PC_ERR_RCVCONSTR, "PortRcvConstraintErrors"), f(c.PC_COUNTER_SELECT2, "CounterSelect2"),
		f(c.PC_ERR_LOCALINTEG, "LocalLinkIntegrityErrors"), f(c.PC_ERR_EXCESS_OVR, "ExcessiveBufferOverrunErrors"),
		f(c.PC_VL15_DROPPED, "VL15Dropped"), f(c.PC_XMT_BYTES, "PortXmitData"), f(c.PC_RCV_BYTES, "PortRcvData"),
		f(c.PC_XMT_PKTS, "PortXmitPkts"), f(c.PC_RCV_PKTS, "PortRcvPkts"), f(c.PC_XMT_WAIT, "PortXmitWait")}
	return attrCase{
		name: "PortCounters", span: ibmad.PortCountersSize, fields: ids,
		ours: func(b []byte) (map[int]val, []byte, error) {
			var p ibmad.PortCounters
			if err := p.UnmarshalBinary(b); err != nil {
				return nil, nil, err
			}
			out, err := p.MarshalBinary()
			vs := []val{u(uint64(p.PortSelect)), u(uint64(p.CounterSelect)), u(uint64(p.SymbolErrorCounter)),
				u(uint64(p.LinkErrorRecoveryCounter)), u(uint64(p.LinkDownedCounter)), u(uint64(p.PortRcvErrors)),
				u(uint64(p.PortRcvRemotePhysicalErrors)), u(uint64(p.PortRcvSwitchRelayErrors)), u(uint64(p.PortXmitDiscards)),
				u(uint64(p.PortXmitConstraintErrors)), u(uint64(p.PortRcvConstraintErrors)), u(uint64(p.CounterSelect2)),
				u(uint64(p.LocalLinkIntegrityErrors)), u(uint64(p.ExcessiveBufferOverrunErrors)), u(uint64(p.VL15Dropped)),
				u(uint64(p.PortXmitData)), u(uint64(p.PortRcvData)), u(uint64(p.PortXmitPkts)), u(uint64(p.PortRcvPkts)),
				u(uint64(p.PortXmitWait))}
			m := map[int]val{}
			for i, fl := range ids {
				m[fl.id] = vs[i]
			}
			return m, out, err
		},
	}
}

func portCountersExtCase() attrCase {
	ids := []field{f(c.PC_EXT_PORT_SELECT, "PortSelect"), f(c.PC_EXT_COUNTER_SELECT, "CounterSelect"),
		f(c.PC_EXT_COUNTER_SELECT2, "CounterSelect2"), f64(c.PC_EXT_XMT_BYTES, "PortXmitData"), f64(c.PC_EXT_RCV_BYTES, "PortRcvData"),
		f64(c.PC_EXT_XMT_PKTS, "PortXmitPkts"), f64(c.PC_EXT_RCV_PKTS, "PortRcvPkts"), f64(c.PC_EXT_XMT_UPKTS, "PortUnicastXmitPkts"),
		f64(c.PC_EXT_RCV_UPKTS, "PortUnicastRcvPkts"), f64(c.PC_EXT_XMT_MPKTS, "PortMulticastXmitPkts"),
		f64(c.PC_EXT_RCV_MPKTS, "PortMulticastRcvPkts"), f64(c.PC_EXT_ERR_SYM, "SymbolErrorCounter"),
		f64(c.PC_EXT_LINK_RECOVERS, "LinkErrorRecoveryCounter"), f64(c.PC_EXT_LINK_DOWNED, "LinkDownedCounter"),
		f64(c.PC_EXT_ERR_RCV, "PortRcvErrors"), f64(c.PC_EXT_ERR_PHYSRCV, "PortRcvRemotePhysicalErrors"),
		f64(c.PC_EXT_ERR_SWITCH_REL, "PortRcvSwitchRelayErrors"), f64(c.PC_EXT_XMT_DISCARDS, "PortXmitDiscards"),
		f64(c.PC_EXT_ERR_XMTCONSTR, "PortXmitConstraintErrors"), f64(c.PC_EXT_ERR_RCVCONSTR, "PortRcvConstraintErrors"),
		f64(c.PC_EXT_ERR_LOCALINTEG, "LocalLinkIntegrityErrors"), f64(c.PC_EXT_ERR_EXCESS_OVR, "ExcessiveBufferOverrunErrors"),
		f64(c.PC_EXT_VL15_DROPPED, "VL15Dropped"), f64(c.PC_EXT_XMT_WAIT, "PortXmitWait"), f64(c.PC_EXT_QP1_DROP, "QP1Dropped")}
	return attrCase{
		name: "PortCountersExtended", span: ibmad.PortCountersExtendedSize, fields: ids,
		ours: func(b []byte) (map[int]val, []byte, error) {
			var p ibmad.PortCountersExtended
			if err := p.UnmarshalBinary(b); err != nil {
				return nil, nil, err
			}
			out, err := p.MarshalBinary()
			vs := []val{u(uint64(p.PortSelect)), u(uint64(p.CounterSelect)), u(uint64(p.CounterSelect2)), u(p.PortXmitData),
				u(p.PortRcvData), u(p.PortXmitPkts), u(p.PortRcvPkts), u(p.PortUnicastXmitPkts), u(p.PortUnicastRcvPkts),
				u(p.PortMulticastXmitPkts), u(p.PortMulticastRcvPkts), u(p.SymbolErrorCounter), u(p.LinkErrorRecoveryCounter),
				u(p.LinkDownedCounter), u(p.PortRcvErrors), u(p.PortRcvRemotePhysicalErrors), u(p.PortRcvSwitchRelayErrors),
				u(p.PortXmitDiscards), u(p.PortXmitConstraintErrors), u(p.PortRcvConstraintErrors), u(p.LocalLinkIntegrityErrors),
				u(p.ExcessiveBufferOverrunErrors), u(p.VL15Dropped), u(p.PortXmitWait), u(p.QP1Dropped)}
			m := map[int]val{}
			for i, fl := range ids {
				m[fl.id] = vs[i]
			}
			return m, out, err
		},
	}
}

// cval decodes field fl of buf with libibmad.
func cval(buf []byte, fl field) val {
	out := make([]byte, 64)
	c.Decode(buf, fl.id, out)
	switch {
	case fl.bytes == 0:
		return val{u: uint64(binary.NativeEndian.Uint32(out))}
	case fl.bytes == 8:
		return val{u: binary.NativeEndian.Uint64(out)}
	default:
		return val{a: out[:fl.bytes]}
	}
}

func cencode(buf []byte, fl field, v val) {
	in := make([]byte, 64)
	switch {
	case fl.bytes == 0:
		binary.NativeEndian.PutUint32(in, uint32(v.u))
	case fl.bytes == 8:
		binary.NativeEndian.PutUint64(in, v.u)
	default:
		copy(in, v.a)
	}
	c.Encode(buf, fl.id, in)
}

const rounds = 1000

func TestAgainstLibibmad(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for _, tc := range cases() {
		t.Run(tc.name, func(t *testing.T) {
			// Coverage: the bits libibmad has a field for.
			mask := make([]byte, 256)
			for _, fl := range tc.fields {
				ones := val{u: ^uint64(0), a: bytes.Repeat([]byte{0xff}, 64)}
				cencode(mask, fl, ones)
			}
			compared := 0
			for i := 0; i < rounds; i++ {
				buf := make([]byte, 256)
				for j := range buf {
					buf[j] = byte(rng.Uint32())
				}
				if tc.fixup != nil {
					tc.fixup(buf)
				}
				ours, enc, err := tc.ours(buf)
				if err != nil {
					t.Fatalf("round %d: our codec: %v", i, err)
				}
				theirs := make([]byte, 256)
				for _, fl := range tc.fields {
					cv := cval(buf, fl)
					ov, ok := ours[fl.id]
					if !ok {
						t.Fatalf("no value of ours for %s", fl.name)
					}
					if fl.bytes > 8 {
						if !bytes.Equal(cv.a, ov.a[:fl.bytes]) {
							t.Fatalf("round %d: %s: libibmad % x, ours % x", i, fl.name, cv.a, ov.a)
						}
					} else if cv.u != ov.u {
						t.Fatalf("round %d: %s: libibmad %#x, ours %#x", i, fl.name, cv.u, ov.u)
					}
					cencode(theirs, fl, cv)
					compared++
				}
				for j := 0; j < tc.span; j++ {
					if enc[j]&mask[j] != theirs[j]&mask[j] {
						t.Fatalf("round %d: encoded byte %d: ours %#02x, libibmad %#02x (mask %#02x)", i, j, enc[j], theirs[j], mask[j])
					}
				}
			}
			if compared != rounds*len(tc.fields) {
				t.Fatalf("compared %d fields, want %d", compared, rounds*len(tc.fields))
			}
		})
	}
}

// TestLibibmadQP1DroppedBug documents the one known libibmad field bug:
// IB_PC_QP1_DROP_F decodes PortCounters data bytes 22-23 (VL15Dropped)
// instead of 20-21. We follow the spec (docs/protocol.md).
func TestLibibmadQP1DroppedBug(t *testing.T) {
	buf := make([]byte, 256)
	binary.BigEndian.PutUint16(buf[20:], 0x1111) // QP1Dropped per the spec
	binary.BigEndian.PutUint16(buf[22:], 0x2222) // VL15Dropped
	got := cval(buf, f(c.PC_QP1_DROP, "QP1Dropped")).u
	if got != 0x2222 {
		t.Fatalf("libibmad IB_PC_QP1_DROP_F = %#x; the documented bug reads 0x2222 (fixed upstream? then follow it)", got)
	}
	var pc ibmad.PortCounters
	if err := pc.UnmarshalBinary(buf); err != nil {
		t.Fatal(err)
	}
	if pc.QP1Dropped != 0x1111 || pc.VL15Dropped != 0x2222 {
		t.Fatalf("ours: QP1Dropped %#x VL15Dropped %#x", pc.QP1Dropped, pc.VL15Dropped)
	}
}
