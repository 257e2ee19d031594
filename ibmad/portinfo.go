package ibmad

import (
	"encoding/binary"
	"fmt"
)

// PortInfoSize is the size of the PortInfo attribute.
const PortInfoSize = 64

// PortState is PortInfo.PortState (4 bits).
type PortState uint8

// Port states (IBA 14.2.5.6).
const (
	PortStateNoChange PortState = 0
	PortStateDown     PortState = 1
	PortStateInit     PortState = 2
	PortStateArmed    PortState = 3
	PortStateActive   PortState = 4
)

func (s PortState) String() string {
	switch s {
	case PortStateNoChange:
		return "NoChange"
	case PortStateDown:
		return "Down"
	case PortStateInit:
		return "Init"
	case PortStateArmed:
		return "Armed"
	case PortStateActive:
		return "Active"
	}
	return fmt.Sprintf("PortState(%d)", uint8(s))
}

// PhysState is PortInfo.PortPhysicalState (4 bits).
type PhysState uint8

// Physical port states.
const (
	PhysStateSleep       PhysState = 1
	PhysStatePolling     PhysState = 2
	PhysStateDisabled    PhysState = 3
	PhysStateTraining    PhysState = 4
	PhysStateLinkUp      PhysState = 5
	PhysStateErrRecovery PhysState = 6
	PhysStatePhyTest     PhysState = 7
)

func (s PhysState) String() string {
	switch s {
	case PhysStateSleep:
		return "Sleep"
	case PhysStatePolling:
		return "Polling"
	case PhysStateDisabled:
		return "Disabled"
	case PhysStateTraining:
		return "PortConfigurationTraining"
	case PhysStateLinkUp:
		return "LinkUp"
	case PhysStateErrRecovery:
		return "LinkErrorRecovery"
	case PhysStatePhyTest:
		return "PhyTest"
	}
	return fmt.Sprintf("PhysState(%d)", uint8(s))
}

// PortInfo CapabilityMask bits used here.
const (
	CapIsSM                       uint32 = 1 << 1
	CapIsExtendedSpeedsSupported  uint32 = 1 << 14
	CapIsCapabilityMask2Supported uint32 = 1 << 15
	CapIsVendorClassSupported     uint32 = 1 << 20
)

// PortInfo is the SMP PortInfo attribute (0x0015; docs/protocol.md).
// Field widths in bits are given where they are not whole bytes.
type PortInfo struct {
	MKey                   uint64
	GIDPrefix              uint64
	LID                    uint16
	MasterSMLID            uint16
	CapabilityMask         uint32
	DiagCode               uint16
	MKeyLeasePeriod        uint16
	LocalPortNum           uint8
	LinkWidthEnabled       uint8
	LinkWidthSupported     uint8
	LinkWidthActive        uint8
	LinkSpeedSupported     uint8     // 4
	PortState              PortState // 4
	PortPhysState          PhysState // 4
	LinkDownDefaultState   uint8     // 4
	MKeyProtectBits        uint8     // 2
	LMC                    uint8     // 3
	LinkSpeedActive        uint8     // 4
	LinkSpeedEnabled       uint8     // 4
	NeighborMTU            uint8     // 4
	MasterSMSL             uint8     // 4
	VLCap                  uint8     // 4
	InitType               uint8     // 4
	VLHighLimit            uint8
	VLArbHighCap           uint8
	VLArbLowCap            uint8
	InitTypeReply          uint8 // 4
	MTUCap                 uint8 // 4
	VLStallCount           uint8 // 3
	HOQLife                uint8 // 5
	OperationalVLs         uint8 // 4
	PartEnforceInbound     bool
	PartEnforceOutbound    bool
	FilterRawInbound       bool
	FilterRawOutbound      bool
	MKeyViolations         uint16
	PKeyViolations         uint16
	QKeyViolations         uint16
	GUIDCap                uint8
	ClientReregister       bool
	McastPKeyTrapSuppress  uint8 // 2
	SubnetTimeout          uint8 // 5
	RespTimeValue          uint8 // 5
	LocalPhyErrors         uint8 // 4
	OverrunErrors          uint8 // 4
	MaxCreditHint          uint16
	LinkSpeedExtActive2    uint8  // 2 (XDR)
	LinkSpeedExtSupported2 uint8  // 2
	LinkSpeedExtEnabled2   uint8  // 3
	LinkRoundTripLatency   uint32 // 24
	CapabilityMask2        uint16
	LinkSpeedExtActive     uint8 // 4
	LinkSpeedExtSupported  uint8 // 4
	LinkSpeedExtEnabled    uint8 // 5
}

// LIDCount returns 2^LMC, the number of LIDs the port answers to.
func (p *PortInfo) LIDCount() int { return 1 << (p.LMC & 7) }

func b2u(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// MarshalTo writes the attribute into b[0:64]. Values wider than their
// field are rejected.
func (p *PortInfo) MarshalTo(b []byte) error {
	if len(b) < PortInfoSize {
		return errShort("PortInfo", PortInfoSize, len(b))
	}
	if err := p.check(); err != nil {
		return err
	}
	binary.BigEndian.PutUint64(b[0:], p.MKey)
	binary.BigEndian.PutUint64(b[8:], p.GIDPrefix)
	binary.BigEndian.PutUint16(b[16:], p.LID)
	binary.BigEndian.PutUint16(b[18:], p.MasterSMLID)
	binary.BigEndian.PutUint32(b[20:], p.CapabilityMask)
	binary.BigEndian.PutUint16(b[24:], p.DiagCode)
	binary.BigEndian.PutUint16(b[26:], p.MKeyLeasePeriod)
	b[28] = p.LocalPortNum
	b[29] = p.LinkWidthEnabled
	b[30] = p.LinkWidthSupported
	b[31] = p.LinkWidthActive
	b[32] = p.LinkSpeedSupported<<4 | uint8(p.PortState)
	b[33] = uint8(p.PortPhysState)<<4 | p.LinkDownDefaultState
	b[34] = p.MKeyProtectBits<<6 | p.LMC
	b[35] = p.LinkSpeedActive<<4 | p.LinkSpeedEnabled
	b[36] = p.NeighborMTU<<4 | p.MasterSMSL
	b[37] = p.VLCap<<4 | p.InitType
	b[38] = p.VLHighLimit
	b[39] = p.VLArbHighCap
	b[40] = p.VLArbLowCap
	b[41] = p.InitTypeReply<<4 | p.MTUCap
	b[42] = p.VLStallCount<<5 | p.HOQLife
	b[43] = p.OperationalVLs<<4 | b2u(p.PartEnforceInbound)<<3 | b2u(p.PartEnforceOutbound)<<2 |
		b2u(p.FilterRawInbound)<<1 | b2u(p.FilterRawOutbound)
	binary.BigEndian.PutUint16(b[44:], p.MKeyViolations)
	binary.BigEndian.PutUint16(b[46:], p.PKeyViolations)
	binary.BigEndian.PutUint16(b[48:], p.QKeyViolations)
	b[50] = p.GUIDCap
	b[51] = b2u(p.ClientReregister)<<7 | p.McastPKeyTrapSuppress<<5 | p.SubnetTimeout
	b[52] = p.RespTimeValue
	b[53] = p.LocalPhyErrors<<4 | p.OverrunErrors
	binary.BigEndian.PutUint16(b[54:], p.MaxCreditHint)
	b[56] = p.LinkSpeedExtActive2<<5 | p.LinkSpeedExtSupported2<<3 | p.LinkSpeedExtEnabled2
	b[57], b[58], b[59] = byte(p.LinkRoundTripLatency>>16), byte(p.LinkRoundTripLatency>>8), byte(p.LinkRoundTripLatency)
	binary.BigEndian.PutUint16(b[60:], p.CapabilityMask2)
	b[62] = p.LinkSpeedExtActive<<4 | p.LinkSpeedExtSupported
	b[63] = p.LinkSpeedExtEnabled
	return nil
}

func (p *PortInfo) check() error {
	type field struct {
		name string
		v    uint32
		bits uint
	}
	for _, f := range [...]field{
		{"LinkSpeedSupported", uint32(p.LinkSpeedSupported), 4}, {"PortState", uint32(p.PortState), 4},
		{"PortPhysState", uint32(p.PortPhysState), 4}, {"LinkDownDefaultState", uint32(p.LinkDownDefaultState), 4},
		{"MKeyProtectBits", uint32(p.MKeyProtectBits), 2}, {"LMC", uint32(p.LMC), 3},
		{"LinkSpeedActive", uint32(p.LinkSpeedActive), 4}, {"LinkSpeedEnabled", uint32(p.LinkSpeedEnabled), 4},
		{"NeighborMTU", uint32(p.NeighborMTU), 4}, {"MasterSMSL", uint32(p.MasterSMSL), 4},
		{"VLCap", uint32(p.VLCap), 4}, {"InitType", uint32(p.InitType), 4},
		{"InitTypeReply", uint32(p.InitTypeReply), 4}, {"MTUCap", uint32(p.MTUCap), 4},
		{"VLStallCount", uint32(p.VLStallCount), 3}, {"HOQLife", uint32(p.HOQLife), 5},
		{"OperationalVLs", uint32(p.OperationalVLs), 4}, {"McastPKeyTrapSuppress", uint32(p.McastPKeyTrapSuppress), 2},
		{"SubnetTimeout", uint32(p.SubnetTimeout), 5}, {"RespTimeValue", uint32(p.RespTimeValue), 5},
		{"LocalPhyErrors", uint32(p.LocalPhyErrors), 4}, {"OverrunErrors", uint32(p.OverrunErrors), 4},
		{"LinkSpeedExtActive2", uint32(p.LinkSpeedExtActive2), 2}, {"LinkSpeedExtSupported2", uint32(p.LinkSpeedExtSupported2), 2},
		{"LinkSpeedExtEnabled2", uint32(p.LinkSpeedExtEnabled2), 3}, {"LinkRoundTripLatency", p.LinkRoundTripLatency, 24},
		{"LinkSpeedExtActive", uint32(p.LinkSpeedExtActive), 4}, {"LinkSpeedExtSupported", uint32(p.LinkSpeedExtSupported), 4},
		{"LinkSpeedExtEnabled", uint32(p.LinkSpeedExtEnabled), 5},
	} {
		if f.v>>f.bits != 0 {
			return fmt.Errorf("PortInfo: %s %d exceeds %d bits: %w", f.name, f.v, f.bits, ErrInvalid)
		}
	}
	return nil
}

// MarshalBinary returns the 64-byte attribute.
func (p *PortInfo) MarshalBinary() ([]byte, error) {
	b := make([]byte, PortInfoSize)
	return b, p.MarshalTo(b)
}

// UnmarshalBinary decodes b[0:64].
func (p *PortInfo) UnmarshalBinary(b []byte) error {
	if len(b) < PortInfoSize {
		return errShort("PortInfo", PortInfoSize, len(b))
	}
	p.MKey = binary.BigEndian.Uint64(b[0:])
	p.GIDPrefix = binary.BigEndian.Uint64(b[8:])
	p.LID = binary.BigEndian.Uint16(b[16:])
	p.MasterSMLID = binary.BigEndian.Uint16(b[18:])
	p.CapabilityMask = binary.BigEndian.Uint32(b[20:])
	p.DiagCode = binary.BigEndian.Uint16(b[24:])
	p.MKeyLeasePeriod = binary.BigEndian.Uint16(b[26:])
	p.LocalPortNum = b[28]
	p.LinkWidthEnabled = b[29]
	p.LinkWidthSupported = b[30]
	p.LinkWidthActive = b[31]
	p.LinkSpeedSupported, p.PortState = b[32]>>4, PortState(b[32]&0xf)
	p.PortPhysState, p.LinkDownDefaultState = PhysState(b[33]>>4), b[33]&0xf
	p.MKeyProtectBits, p.LMC = b[34]>>6, b[34]&0x7
	p.LinkSpeedActive, p.LinkSpeedEnabled = b[35]>>4, b[35]&0xf
	p.NeighborMTU, p.MasterSMSL = b[36]>>4, b[36]&0xf
	p.VLCap, p.InitType = b[37]>>4, b[37]&0xf
	p.VLHighLimit = b[38]
	p.VLArbHighCap = b[39]
	p.VLArbLowCap = b[40]
	p.InitTypeReply, p.MTUCap = b[41]>>4, b[41]&0xf
	p.VLStallCount, p.HOQLife = b[42]>>5, b[42]&0x1f
	p.OperationalVLs = b[43] >> 4
	p.PartEnforceInbound = b[43]&0x8 != 0
	p.PartEnforceOutbound = b[43]&0x4 != 0
	p.FilterRawInbound = b[43]&0x2 != 0
	p.FilterRawOutbound = b[43]&0x1 != 0
	p.MKeyViolations = binary.BigEndian.Uint16(b[44:])
	p.PKeyViolations = binary.BigEndian.Uint16(b[46:])
	p.QKeyViolations = binary.BigEndian.Uint16(b[48:])
	p.GUIDCap = b[50]
	p.ClientReregister = b[51]&0x80 != 0
	p.McastPKeyTrapSuppress = (b[51] >> 5) & 0x3
	p.SubnetTimeout = b[51] & 0x1f
	p.RespTimeValue = b[52] & 0x1f
	p.LocalPhyErrors, p.OverrunErrors = b[53]>>4, b[53]&0xf
	p.MaxCreditHint = binary.BigEndian.Uint16(b[54:])
	p.LinkSpeedExtActive2 = (b[56] >> 5) & 0x3
	p.LinkSpeedExtSupported2 = (b[56] >> 3) & 0x3
	p.LinkSpeedExtEnabled2 = b[56] & 0x7
	p.LinkRoundTripLatency = uint32(b[57])<<16 | uint32(b[58])<<8 | uint32(b[59])
	p.CapabilityMask2 = binary.BigEndian.Uint16(b[60:])
	p.LinkSpeedExtActive, p.LinkSpeedExtSupported = b[62]>>4, b[62]&0xf
	p.LinkSpeedExtEnabled = b[63] & 0x1f
	return nil
}
