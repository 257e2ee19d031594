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
