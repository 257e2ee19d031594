package ibmad

import (
	"encoding/binary"
	"fmt"
)

// PortCountersSize is the size of the PortCounters attribute as far as
// PortXmitWait.
const PortCountersSize = 44

// AllPortSelect selects every port in a PortCounters request when the
// PMA advertises AllPortSelect.
const AllPortSelect = 0xFF

// PortCounters is the PerfMgt PortCounters attribute (0x0012;
// docs/protocol.md). Counters saturate at all ones.
type PortCounters struct {
	PortSelect                   uint8
	CounterSelect                uint16
	SymbolErrorCounter           uint16
	LinkErrorRecoveryCounter     uint8
	LinkDownedCounter            uint8
	PortRcvErrors                uint16
	PortRcvRemotePhysicalErrors  uint16
	PortRcvSwitchRelayErrors     uint16
	PortXmitDiscards             uint16
	PortXmitConstraintErrors     uint8
	PortRcvConstraintErrors      uint8
	CounterSelect2               uint8
	LocalLinkIntegrityErrors     uint8 // 4
	ExcessiveBufferOverrunErrors uint8 // 4
	// QP1Dropped is at data bytes 20-21, the spec position. libibmad's
	// IB_PC_QP1_DROP_F decodes bytes 22-23 (VL15Dropped) instead: a
	// libibmad bug (docs/protocol.md).
	QP1Dropped   uint16
	VL15Dropped  uint16
	PortXmitData uint32 // units of 4 octets
	PortRcvData  uint32 // units of 4 octets
	PortXmitPkts uint32
	PortRcvPkts  uint32
	PortXmitWait uint32
}

// MarshalTo writes the attribute into b[0:44].
func (p *PortCounters) MarshalTo(b []byte) error {
	if len(b) < PortCountersSize {
		return errShort("PortCounters", PortCountersSize, len(b))
	}
	if p.LocalLinkIntegrityErrors > 0xf || p.ExcessiveBufferOverrunErrors > 0xf {
		return fmt.Errorf("PortCounters: 4-bit counter overflow: %w", ErrInvalid)
	}
	b[0] = 0
	b[1] = p.PortSelect
	binary.BigEndian.PutUint16(b[2:], p.CounterSelect)
	binary.BigEndian.PutUint16(b[4:], p.SymbolErrorCounter)
	b[6] = p.LinkErrorRecoveryCounter
	b[7] = p.LinkDownedCounter
	binary.BigEndian.PutUint16(b[8:], p.PortRcvErrors)
	binary.BigEndian.PutUint16(b[10:], p.PortRcvRemotePhysicalErrors)
	binary.BigEndian.PutUint16(b[12:], p.PortRcvSwitchRelayErrors)
	binary.BigEndian.PutUint16(b[14:], p.PortXmitDiscards)
	b[16] = p.PortXmitConstraintErrors
	b[17] = p.PortRcvConstraintErrors
	b[18] = p.CounterSelect2
	b[19] = p.LocalLinkIntegrityErrors<<4 | p.ExcessiveBufferOverrunErrors
	binary.BigEndian.PutUint16(b[20:], p.QP1Dropped)
	binary.BigEndian.PutUint16(b[22:], p.VL15Dropped)
	binary.BigEndian.PutUint32(b[24:], p.PortXmitData)
	binary.BigEndian.PutUint32(b[28:], p.PortRcvData)
	binary.BigEndian.PutUint32(b[32:], p.PortXmitPkts)
	binary.BigEndian.PutUint32(b[36:], p.PortRcvPkts)
	binary.BigEndian.PutUint32(b[40:], p.PortXmitWait)
	return nil
}

// MarshalBinary returns the 44-byte attribute.
func (p *PortCounters) MarshalBinary() ([]byte, error) {
	b := make([]byte, PortCountersSize)
	return b, p.MarshalTo(b)
}

// UnmarshalBinary decodes b[0:44].
func (p *PortCounters) UnmarshalBinary(b []byte) error {
	if len(b) < PortCountersSize {
		return errShort("PortCounters", PortCountersSize, len(b))
	}
	p.PortSelect = b[1]
	p.CounterSelect = binary.BigEndian.Uint16(b[2:])
	p.SymbolErrorCounter = binary.BigEndian.Uint16(b[4:])
	p.LinkErrorRecoveryCounter = b[6]
	p.LinkDownedCounter = b[7]
	p.PortRcvErrors = binary.BigEndian.Uint16(b[8:])
	p.PortRcvRemotePhysicalErrors = binary.BigEndian.Uint16(b[10:])
	p.PortRcvSwitchRelayErrors = binary.BigEndian.Uint16(b[12:])
	p.PortXmitDiscards = binary.BigEndian.Uint16(b[14:])
	p.PortXmitConstraintErrors = b[16]
	p.PortRcvConstraintErrors = b[17]
	p.CounterSelect2 = b[18]
	p.LocalLinkIntegrityErrors, p.ExcessiveBufferOverrunErrors = b[19]>>4, b[19]&0xf
	p.QP1Dropped = binary.BigEndian.Uint16(b[20:])
	p.VL15Dropped = binary.BigEndian.Uint16(b[22:])
	p.PortXmitData = binary.BigEndian.Uint32(b[24:])
	p.PortRcvData = binary.BigEndian.Uint32(b[28:])
	p.PortXmitPkts = binary.BigEndian.Uint32(b[32:])
	p.PortRcvPkts = binary.BigEndian.Uint32(b[36:])
	p.PortXmitWait = binary.BigEndian.Uint32(b[40:])
	return nil
}

// PortCountersExtendedSize is the size of PortCountersExtended including
// the optional 64-bit error counters.
const PortCountersExtendedSize = 184

// PortCountersExtended is the PerfMgt PortCountersExtended attribute
// (0x001D; docs/protocol.md). The error counters from data byte 72 on are
// valid only when the PMA sets ClassPortInfo CapabilityMask2 bit 1.
type PortCountersExtended struct {
	PortSelect            uint8
	CounterSelect         uint16
	CounterSelect2        uint32
	PortXmitData          uint64
	PortRcvData           uint64
	PortXmitPkts          uint64
	PortRcvPkts           uint64
	PortUnicastXmitPkts   uint64
	PortUnicastRcvPkts    uint64
	PortMulticastXmitPkts uint64
	PortMulticastRcvPkts  uint64

	SymbolErrorCounter           uint64
	LinkErrorRecoveryCounter     uint64
	LinkDownedCounter            uint64
	PortRcvErrors                uint64
	PortRcvRemotePhysicalErrors  uint64
	PortRcvSwitchRelayErrors     uint64
	PortXmitDiscards             uint64
	PortXmitConstraintErrors     uint64
	PortRcvConstraintErrors      uint64
	LocalLinkIntegrityErrors     uint64
	ExcessiveBufferOverrunErrors uint64
	VL15Dropped                  uint64
	PortXmitWait                 uint64
	QP1Dropped                   uint64
}

func (p *PortCountersExtended) counters() [22]*uint64 {
	return [22]*uint64{&p.PortXmitData, &p.PortRcvData, &p.PortXmitPkts, &p.PortRcvPkts,
		&p.PortUnicastXmitPkts, &p.PortUnicastRcvPkts, &p.PortMulticastXmitPkts, &p.PortMulticastRcvPkts,
		&p.SymbolErrorCounter, &p.LinkErrorRecoveryCounter, &p.LinkDownedCounter, &p.PortRcvErrors,
		&p.PortRcvRemotePhysicalErrors, &p.PortRcvSwitchRelayErrors, &p.PortXmitDiscards,
		&p.PortXmitConstraintErrors, &p.PortRcvConstraintErrors, &p.LocalLinkIntegrityErrors,
		&p.ExcessiveBufferOverrunErrors, &p.VL15Dropped, &p.PortXmitWait, &p.QP1Dropped}
}

// MarshalTo writes the attribute into b[0:184].
func (p *PortCountersExtended) MarshalTo(b []byte) error {
	if len(b) < PortCountersExtendedSize {
		return errShort("PortCountersExtended", PortCountersExtendedSize, len(b))
	}
	b[0] = 0
	b[1] = p.PortSelect
	binary.BigEndian.PutUint16(b[2:], p.CounterSelect)
	binary.BigEndian.PutUint32(b[4:], p.CounterSelect2)
	for i, c := range p.counters() {
		binary.BigEndian.PutUint64(b[8+8*i:], *c)
	}
	return nil
}

// MarshalBinary returns the 184-byte attribute.
func (p *PortCountersExtended) MarshalBinary() ([]byte, error) {
	b := make([]byte, PortCountersExtendedSize)
	return b, p.MarshalTo(b)
}

// UnmarshalBinary decodes b[0:184].
func (p *PortCountersExtended) UnmarshalBinary(b []byte) error {
	if len(b) < PortCountersExtendedSize {
		return errShort("PortCountersExtended", PortCountersExtendedSize, len(b))
	}
	p.PortSelect = b[1]
	p.CounterSelect = binary.BigEndian.Uint16(b[2:])
	p.CounterSelect2 = binary.BigEndian.Uint32(b[4:])
	for i, c := range p.counters() {
		*c = binary.BigEndian.Uint64(b[8+8*i:])
	}
	return nil
}

// PortRcvErrorDetailsSize and PortXmitDiscardDetailsSize are the sizes of
// the two error-detail attributes.
const (
	PortRcvErrorDetailsSize    = 16
	PortXmitDiscardDetailsSize = 12
)

// PortRcvErrorDetails is the PerfMgt PortRcvErrorDetails attribute
// (0x0015; docs/protocol.md): what kind of error PortRcvErrors counted.
// Its 16-bit counters saturate at all ones.
type PortRcvErrorDetails struct {
	PortSelect                uint8
	CounterSelect             uint16
	PortLocalPhysicalErrors   uint16
	PortMalformedPacketErrors uint16
	PortBufferOverrunErrors   uint16
	PortDLIDMappingErrors     uint16
	PortVLMappingErrors       uint16
	PortLoopingErrors         uint16
}

func (p *PortRcvErrorDetails) counters() []*uint16 {
	return []*uint16{&p.PortLocalPhysicalErrors, &p.PortMalformedPacketErrors, &p.PortBufferOverrunErrors,
		&p.PortDLIDMappingErrors, &p.PortVLMappingErrors, &p.PortLoopingErrors}
}

// MarshalTo writes the attribute into b[0:16].
func (p *PortRcvErrorDetails) MarshalTo(b []byte) error {
	return put16s("PortRcvErrorDetails", b, PortRcvErrorDetailsSize, p.PortSelect, p.CounterSelect, p.counters())
}

// MarshalBinary returns the 16-byte attribute.
func (p *PortRcvErrorDetails) MarshalBinary() ([]byte, error) {
	b := make([]byte, PortRcvErrorDetailsSize)
	return b, p.MarshalTo(b)
}

// UnmarshalBinary decodes b[0:16].
func (p *PortRcvErrorDetails) UnmarshalBinary(b []byte) error {
	return get16s("PortRcvErrorDetails", b, PortRcvErrorDetailsSize, &p.PortSelect, &p.CounterSelect, p.counters())
}

// PortXmitDiscardDetails is the PerfMgt PortXmitDiscardDetails attribute
// (0x0016; docs/protocol.md): why PortXmitDiscards counted. Its 16-bit
// counters saturate at all ones.
type PortXmitDiscardDetails struct {
	PortSelect                     uint8
	CounterSelect                  uint16
	PortInactiveDiscards           uint16
	PortNeighborMTUDiscards        uint16
	PortSwLifetimeLimitDiscards    uint16
	PortSwHOQLifetimeLimitDiscards uint16
}

func (p *PortXmitDiscardDetails) counters() []*uint16 {
	return []*uint16{&p.PortInactiveDiscards, &p.PortNeighborMTUDiscards, &p.PortSwLifetimeLimitDiscards,
		&p.PortSwHOQLifetimeLimitDiscards}
}

// MarshalTo writes the attribute into b[0:12].
func (p *PortXmitDiscardDetails) MarshalTo(b []byte) error {
	return put16s("PortXmitDiscardDetails", b, PortXmitDiscardDetailsSize, p.PortSelect, p.CounterSelect, p.counters())
}

// MarshalBinary returns the 12-byte attribute.
func (p *PortXmitDiscardDetails) MarshalBinary() ([]byte, error) {
	b := make([]byte, PortXmitDiscardDetailsSize)
	return b, p.MarshalTo(b)
}

// UnmarshalBinary decodes b[0:12].
func (p *PortXmitDiscardDetails) UnmarshalBinary(b []byte) error {
	return get16s("PortXmitDiscardDetails", b, PortXmitDiscardDetailsSize, &p.PortSelect, &p.CounterSelect, p.counters())
}

// put16s writes PortSelect (byte 1), CounterSelect (bytes 2-3) and
// 16-bit counters from byte 4 on: the layout the detail attributes share.
func put16s(name string, b []byte, size int, sel uint8, cs uint16, cs16 []*uint16) error {
	if len(b) < size {
		return errShort(name, size, len(b))
	}
	b[0], b[1] = 0, sel
	binary.BigEndian.PutUint16(b[2:], cs)
	for i, c := range cs16 {
		binary.BigEndian.PutUint16(b[4+2*i:], *c)
	}
	return nil
}

func get16s(name string, b []byte, size int, sel *uint8, cs *uint16, cs16 []*uint16) error {
	if len(b) < size {
		return errShort(name, size, len(b))
	}
	*sel, *cs = b[1], binary.BigEndian.Uint16(b[2:])
	for i, c := range cs16 {
		*c = binary.BigEndian.Uint16(b[4+2*i:])
	}
	return nil
}

// NumLanes is the number of lanes PortExtendedSpeedsCounters counts.
const NumLanes = 12

// PortExtendedSpeedsCountersSize is the size of PortExtendedSpeedsCounters
// in either layout (the RS-FEC one is the longer).
const PortExtendedSpeedsCountersSize = 152

// PortExtendedSpeedsCounters is the PerfMgt PortExtendedSpeedsCounters
// attribute (0x001F; docs/protocol.md), read at FDR and faster. Its
// layout depends on the port's FEC mode: without RS-FEC, lane counters
// of detected errors and of correctable and uncorrectable FEC blocks; with
// RS-FEC active (RSFEC), lane counters of corrected symbols and port-wide
// block and symbol counters. Fields of the other layout are zero.
type PortExtendedSpeedsCounters struct {
	RSFEC                  bool // the layout: set before MarshalTo and UnmarshalBinary
	PortSelect             uint8
	CounterSelect          uint64
	SyncHeaderErrorCounter uint16
	UnknownBlockCounter    uint16
	// Without RS-FEC.
	ErrorDetectionCounterLane        [NumLanes]uint16
	FECCorrectableBlockCounterLane   [NumLanes]uint32
	FECUncorrectableBlockCounterLane [NumLanes]uint32
	// With RS-FEC.
	FECCorrectableSymbolCounterLane  [NumLanes]uint32
	PortFECCorrectableBlockCounter   uint32
	PortFECUncorrectableBlockCounter uint32
	PortFECCorrectedSymbolCounter    uint32
}

// MarshalTo writes the attribute into b[0:152] in its layout.
func (p *PortExtendedSpeedsCounters) MarshalTo(b []byte) error {
	if len(b) < PortExtendedSpeedsCountersSize {
		return errShort("PortExtendedSpeedsCounters", PortExtendedSpeedsCountersSize, len(b))
	}
	clear(b[:PortExtendedSpeedsCountersSize])
	b[1] = p.PortSelect
	binary.BigEndian.PutUint64(b[8:], p.CounterSelect)
	binary.BigEndian.PutUint16(b[16:], p.SyncHeaderErrorCounter)
	binary.BigEndian.PutUint16(b[18:], p.UnknownBlockCounter)
	for l := range NumLanes {
		if p.RSFEC {
			binary.BigEndian.PutUint32(b[44+4*l:], p.FECCorrectableSymbolCounterLane[l])
			continue
		}
		binary.BigEndian.PutUint16(b[20+2*l:], p.ErrorDetectionCounterLane[l])
		binary.BigEndian.PutUint32(b[44+4*l:], p.FECCorrectableBlockCounterLane[l])
		binary.BigEndian.PutUint32(b[92+4*l:], p.FECUncorrectableBlockCounterLane[l])
	}
	if p.RSFEC {
		binary.BigEndian.PutUint32(b[140:], p.PortFECCorrectableBlockCounter)
		binary.BigEndian.PutUint32(b[144:], p.PortFECUncorrectableBlockCounter)
		binary.BigEndian.PutUint32(b[148:], p.PortFECCorrectedSymbolCounter)
	}
	return nil
}

// MarshalBinary returns the 152-byte attribute.
func (p *PortExtendedSpeedsCounters) MarshalBinary() ([]byte, error) {
	b := make([]byte, PortExtendedSpeedsCountersSize)
	return b, p.MarshalTo(b)
}

// UnmarshalBinary decodes b[0:152] in the layout p.RSFEC names, and
// zeroes the other layout's fields.
func (p *PortExtendedSpeedsCounters) UnmarshalBinary(b []byte) error {
	if len(b) < PortExtendedSpeedsCountersSize {
		return errShort("PortExtendedSpeedsCounters", PortExtendedSpeedsCountersSize, len(b))
	}
	*p = PortExtendedSpeedsCounters{RSFEC: p.RSFEC, PortSelect: b[1], CounterSelect: binary.BigEndian.Uint64(b[8:]),
		SyncHeaderErrorCounter: binary.BigEndian.Uint16(b[16:]), UnknownBlockCounter: binary.BigEndian.Uint16(b[18:])}
	for l := range NumLanes {
		if p.RSFEC {
			p.FECCorrectableSymbolCounterLane[l] = binary.BigEndian.Uint32(b[44+4*l:])
			continue
		}
		p.ErrorDetectionCounterLane[l] = binary.BigEndian.Uint16(b[20+2*l:])
		p.FECCorrectableBlockCounterLane[l] = binary.BigEndian.Uint32(b[44+4*l:])
		p.FECUncorrectableBlockCounterLane[l] = binary.BigEndian.Uint32(b[92+4*l:])
	}
	if p.RSFEC {
		p.PortFECCorrectableBlockCounter = binary.BigEndian.Uint32(b[140:])
		p.PortFECUncorrectableBlockCounter = binary.BigEndian.Uint32(b[144:])
		p.PortFECCorrectedSymbolCounter = binary.BigEndian.Uint32(b[148:])
	}
	return nil
}

// FECBlocks returns the correctable and uncorrectable FEC blocks the
// reading counts, summed over lanes (or port-wide, with RS-FEC).
func (p *PortExtendedSpeedsCounters) FECBlocks() (corrected, uncorrectable uint64) {
	if p.RSFEC {
		return uint64(p.PortFECCorrectableBlockCounter), uint64(p.PortFECUncorrectableBlockCounter)
	}
	for l := range NumLanes {
		corrected += uint64(p.FECCorrectableBlockCounterLane[l])
		uncorrectable += uint64(p.FECUncorrectableBlockCounterLane[l])
	}
	return corrected, uncorrectable
}
