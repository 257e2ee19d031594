package ibmad

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// MADSize is the size of every MAD on the wire (IBA 13.4.2).
const MADSize = 256

// HeaderSize is the size of the common MAD header (bytes 0-23).
const HeaderSize = 24

// Errors returned by decoders. They are wrapped with context; test with errors.Is.
var (
	// ErrShort means a buffer is too short for the structure being decoded.
	ErrShort = errors.New("ibmad: buffer too short")
	// ErrInvalid means a field holds a value the format does not allow.
	ErrInvalid = errors.New("ibmad: invalid value")
)

func errShort(what string, need, have int) error {
	return fmt.Errorf("%s: need %d bytes, have %d: %w", what, need, have, ErrShort)
}

// MgmtClass is the management class (MAD byte 1).
type MgmtClass uint8

// Management classes (IBA 13.4.4 table 104).
const (
	ClassSubnLID    MgmtClass = 0x01 // LID-routed SMP
	ClassSubnAdm    MgmtClass = 0x03 // SA
	ClassPerfMgt    MgmtClass = 0x04
	ClassBM         MgmtClass = 0x05
	ClassDevMgt     MgmtClass = 0x06
	ClassCM         MgmtClass = 0x07
	ClassSNMP       MgmtClass = 0x08
	ClassCC         MgmtClass = 0x21
	ClassIBTracer   MgmtClass = 0x30 // vendor range 2: the ibtracer SourceRoute class (docs/protocol.md)
	ClassOpenIBPing MgmtClass = 0x32 // vendor range 2: infiniband-diags ibping
	ClassSubnDR     MgmtClass = 0x81 // directed-route SMP
)

// IsSMP reports whether c is one of the two subnet-management classes (QP0).
func (c MgmtClass) IsSMP() bool { return c == ClassSubnLID || c == ClassSubnDR }

// IsVendorRange2 reports whether c is a vendor class with an OUI (0x30-0x4F).
func (c MgmtClass) IsVendorRange2() bool { return c >= 0x30 && c <= 0x4f }

// IsVendorRange1 reports whether c is a vendor class without OUI (0x09-0x0F).
func (c MgmtClass) IsVendorRange1() bool { return c >= 0x09 && c <= 0x0f }

func (c MgmtClass) String() string {
	switch c {
	case ClassSubnLID:
		return "smp"
	case ClassSubnDR:
		return "smp_dr"
	case ClassSubnAdm:
		return "sa"
	case ClassPerfMgt:
		return "perfmgt"
	case ClassBM:
		return "bm"
	case ClassDevMgt:
		return "devmgt"
	case ClassCM:
		return "cm"
	case ClassSNMP:
		return "snmp"
	case ClassCC:
		return "cc"
	case ClassIBTracer:
		return "ibtracer"
	case ClassOpenIBPing:
		return "ibping"
	}
	return fmt.Sprintf("0x%02x", uint8(c))
}

// Method is the MAD method with the response bit (byte 3).
type Method uint8

// Methods (IBA 13.4.5).
const (
	MethodGet          Method = 0x01
	MethodSet          Method = 0x02
	MethodSend         Method = 0x03
	MethodTrap         Method = 0x05
	MethodReport       Method = 0x06
	MethodTrapRepress  Method = 0x07
	MethodGetTable     Method = 0x12
	MethodGetTraceTbl  Method = 0x13
	MethodGetMulti     Method = 0x14
	MethodDelete       Method = 0x15
	MethodGetResp      Method = 0x81
	MethodReportResp   Method = 0x86
	MethodGetTableResp Method = 0x92
	MethodResponseBit  Method = 0x80
)

// IsResponse reports whether the R bit is set. TrapRepress is also routed as
// a response by the kernel (docs/protocol.md) but carries no R bit.
func (m Method) IsResponse() bool { return m&MethodResponseBit != 0 }

// Response returns the response method for a request method (Get -> GetResp).
// A Set is answered with GetResp as well (IBA 13.4.5).
func (m Method) Response() Method {
	if m == MethodSet {
		return MethodGetResp
	}
	return m | MethodResponseBit
}

func (m Method) String() string {
	switch m {
	case MethodGet:
		return "Get"
	case MethodSet:
		return "Set"
	case MethodSend:
		return "Send"
	case MethodTrap:
		return "Trap"
	case MethodReport:
		return "Report"
	case MethodTrapRepress:
		return "TrapRepress"
	case MethodGetTable:
		return "GetTable"
	case MethodGetResp:
		return "GetResp"
	case MethodReportResp:
		return "ReportResp"
	case MethodGetTableResp:
		return "GetTableResp"
	}
	return fmt.Sprintf("0x%02x", uint8(m))
}

// AttrID is the attribute identifier (bytes 16-17).
type AttrID uint16

// Attribute identifiers used by this project. SMP, SA, PerfMgt and vendor
// attributes share a number space per class, so some values repeat.
const (
	AttrClassPortInfo AttrID = 0x0001 // any GS class

	AttrNodeDescription       AttrID = 0x0010 // SMP
	AttrNodeInfo              AttrID = 0x0011 // SMP
	AttrSwitchInfo            AttrID = 0x0012 // SMP
	AttrPortInfo              AttrID = 0x0015 // SMP
	AttrLinearForwardingTable AttrID = 0x0019 // SMP

	AttrNodeRecord AttrID = 0x0011 // SA
	AttrPathRecord AttrID = 0x0035 // SA

	AttrPortCounters         AttrID = 0x0012 // PerfMgt
	AttrPortCountersExtended AttrID = 0x001D // PerfMgt

	AttrPortRcvErrorDetails        AttrID = 0x0015 // PerfMgt
	AttrPortXmitDiscardDetails     AttrID = 0x0016 // PerfMgt
	AttrPortExtendedSpeedsCounters AttrID = 0x001F // PerfMgt

	AttrSourceRoute AttrID = 0x0010 // ibtracer vendor class 0x30 (docs/protocol.md)
	AttrPing        AttrID = 0x0000 // ibping class 0x32
)

// Header is the common MAD header (IBA 13.4.2, docs/protocol.md).
type Header struct {
	BaseVersion   uint8
	MgmtClass     MgmtClass
	ClassVersion  uint8
	Method        Method // includes the R bit
	Status        Status
	ClassSpecific uint16 // DR SMP: HopPointer<<8 | HopCount
	TID           uint64
	AttrID        AttrID
	AttrMod       uint32
}

// MarshalTo writes the header into b[0:24].
func (h *Header) MarshalTo(b []byte) error {
	if len(b) < HeaderSize {
		return errShort("MAD header", HeaderSize, len(b))
	}
	b[0] = h.BaseVersion
	b[1] = uint8(h.MgmtClass)
	b[2] = h.ClassVersion
	b[3] = uint8(h.Method)
	binary.BigEndian.PutUint16(b[4:], uint16(h.Status))
	binary.BigEndian.PutUint16(b[6:], h.ClassSpecific)
	binary.BigEndian.PutUint64(b[8:], h.TID)
	binary.BigEndian.PutUint16(b[16:], uint16(h.AttrID))
	b[18], b[19] = 0, 0
	binary.BigEndian.PutUint32(b[20:], h.AttrMod)
	return nil
}

// MarshalBinary returns the header as 24 bytes.
func (h *Header) MarshalBinary() ([]byte, error) {
	b := make([]byte, HeaderSize)
	return b, h.MarshalTo(b)
}

// UnmarshalBinary reads the header from b[0:24].
func (h *Header) UnmarshalBinary(b []byte) error {
	if len(b) < HeaderSize {
		return errShort("MAD header", HeaderSize, len(b))
	}
	h.BaseVersion = b[0]
	h.MgmtClass = MgmtClass(b[1])
	h.ClassVersion = b[2]
	h.Method = Method(b[3])
	h.Status = Status(binary.BigEndian.Uint16(b[4:]))
	h.ClassSpecific = binary.BigEndian.Uint16(b[6:])
	h.TID = binary.BigEndian.Uint64(b[8:])
	h.AttrID = AttrID(binary.BigEndian.Uint16(b[16:]))
	h.AttrMod = binary.BigEndian.Uint32(b[20:])
	return nil
}

// MAD is one 256-byte management datagram. Its accessor methods read and
// write header fields in place, without decoding the whole header; the
// engine's hot path uses them.
type MAD [MADSize]byte

func (m *MAD) BaseVersion() uint8              { return m[0] }
func (m *MAD) MgmtClass() MgmtClass            { return MgmtClass(m[1]) }
func (m *MAD) ClassVersion() uint8             { return m[2] }
func (m *MAD) Method() Method                  { return Method(m[3]) }
func (m *MAD) Status() Status                  { return Status(binary.BigEndian.Uint16(m[4:])) }
func (m *MAD) TID() uint64                     { return binary.BigEndian.Uint64(m[8:]) }
func (m *MAD) TIDLow() uint32                  { return binary.BigEndian.Uint32(m[12:]) }
func (m *MAD) AttrID() AttrID                  { return AttrID(binary.BigEndian.Uint16(m[16:])) }
func (m *MAD) AttrMod() uint32                 { return binary.BigEndian.Uint32(m[20:]) }
func (m *MAD) SetStatus(s Status)              { binary.BigEndian.PutUint16(m[4:], uint16(s)) }
func (m *MAD) SetMethod(x Method)              { m[3] = uint8(x) }
func (m *MAD) SetTID(tid uint64)               { binary.BigEndian.PutUint64(m[8:], tid) }
func (m *MAD) SetTIDLow(tid uint32)            { binary.BigEndian.PutUint32(m[12:], tid) }
func (m *MAD) Header() (h Header)              { _ = h.UnmarshalBinary(m[:]); return h }
func (m *MAD) SetHeader(h *Header)             { _ = h.MarshalTo(m[:]) }
func (m *MAD) Reset()                          { *m = MAD{} }
func (m *MAD) OUI() OUI                        { return OUI(uint32(m[37])<<16 | uint32(m[38])<<8 | uint32(m[39])) }
func (m *MAD) SMPData() []byte                 { return m[SMPDataOffset : SMPDataOffset+SMPDataSize] }
func (m *MAD) SAData() []byte                  { return m[SADataOffset:] }
func (m *MAD) PerfMgtData() []byte             { return m[PerfMgtDataOffset:] }
func (m *MAD) VendorData() []byte              { return m[VendorDataOffset:] }
func (m *MAD) IsDirectedRoute() bool           { return m[1] == uint8(ClassSubnDR) }
func (m *MAD) DRHopPointer() uint8             { return m[6] }
func (m *MAD) DRHopCount() uint8               { return m[7] }
func (m *MAD) SetDRHopPointer(p uint8)         { m[6] = p }
func (m *MAD) DRDirection() bool               { return m[4]&0x80 != 0 }
func (m *MAD) AttrData(class MgmtClass) []byte { return m[DataOffset(class):] }

// DataOffset returns where the attribute data of class c starts in a MAD
// (libibmad's datasz/dataoffs table, docs/protocol.md).
func DataOffset(c MgmtClass) int {
	switch {
	case c.IsSMP():
		return SMPDataOffset
	case c == ClassSubnAdm:
		return SADataOffset
	case c == ClassPerfMgt, c == ClassDevMgt, c == 0x10, c == 0x12:
		return PerfMgtDataOffset
	case c.IsVendorRange2():
		return VendorDataOffset
	}
	return HeaderSize
}

// Data offsets of the classes used here.
const (
	SMPDataOffset     = 64
	SMPDataSize       = 64
	SADataOffset      = 56
	SADataSize        = 200
	PerfMgtDataOffset = 64
	PerfMgtDataSize   = 192
	VendorDataOffset  = 40
	VendorDataSize    = 216
)

func (a AttrID) name(c MgmtClass) string {
	switch {
	case a == AttrClassPortInfo:
		return "ClassPortInfo"
	case c.IsSMP():
		switch a {
		case AttrNodeDescription:
			return "NodeDescription"
		case AttrNodeInfo:
			return "NodeInfo"
		case AttrSwitchInfo:
			return "SwitchInfo"
		case AttrPortInfo:
			return "PortInfo"
		case AttrLinearForwardingTable:
			return "LinearForwardingTable"
		case AttrMulticastForwardingTable:
			return "MulticastForwardingTable"
		}
	case c == ClassSubnAdm:
		switch a {
		case AttrNodeRecord:
			return "NodeRecord"
		case AttrPathRecord:
			return "PathRecord"
		case AttrPortInfoRecord:
			return "PortInfoRecord"
		case AttrSwitchInfoRecord:
			return "SwitchInfoRecord"
		case AttrLFTRecord:
			return "LFTRecord"
		case AttrLinkRecord:
			return "LinkRecord"
		}
	case c == ClassPerfMgt:
		switch a {
		case AttrPortCounters:
			return "PortCounters"
		case AttrPortCountersExtended:
			return "PortCountersExtended"
		case AttrPortVLXmitWaitCounters:
			return "PortVLXmitWaitCounters"
		case AttrPortRcvErrorDetails:
			return "PortRcvErrorDetails"
		case AttrPortXmitDiscardDetails:
			return "PortXmitDiscardDetails"
		case AttrPortExtendedSpeedsCounters:
			return "PortExtendedSpeedsCounters"
		}
	case c == ClassIBTracer && a == AttrSourceRoute:
		return "SourceRoute"
	}
	return fmt.Sprintf("attr 0x%04x", uint16(a))
}

// AttrName names attribute a of class c ("NodeInfo", "PathRecord", ...).
func AttrName(c MgmtClass, a AttrID) string { return a.name(c) }
