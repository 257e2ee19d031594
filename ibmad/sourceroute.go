package ibmad

import (
	"encoding/binary"
)

// SourceRoute sizes: the seed's format is 66 bytes; our extension makes 158.
const (
	SourceRouteSeedSize = 66
	SourceRouteSize     = 158
	// SourceRouteExtVersion is the extension version this package writes.
	SourceRouteExtVersion = 1
	// MaxTraceHops is the number of InPort entries, and the largest HopCount.
	MaxTraceHops = 64
)

// SourceRoute flags (docs/protocol.md).
const (
	SRFlagIngressKnown uint8 = 1 << 0 // ActualInPort is the true ingress port
	SRFlagSwitch       uint8 = 1 << 1 // the responder is a switch (port 0 agent)
)

// SourceRoute is the ibtracer vendor attribute (class 0x30, attribute
// 0x0010), at vendor data offset 0 (MAD byte 40). Bytes 0..65 are the 2005
// seed format; the rest is the extension (docs/protocol.md). A tracer must
// accept ExtVersion 0 responses, in which the extension fields are zero.
type SourceRoute struct {
	ActualInPort uint8 // set by the agent
	HopCount     uint8 // 1..64: the hop this request is addressed to
	// InPort[i] is the expected ingress port at hop i+1.
	InPort          [MaxTraceHops]uint8
	ExtVersion      uint8
	Flags           uint8
	NodeGUID        GUID
	PortGUID        GUID // of the ingress port
	BaseLID         uint16
	RecvTimeUnixNs  uint64
	NodeDescription NodeDescription
}

// ExpectedInPort returns InPort[HopCount-1] and whether HopCount is valid.
func (s *SourceRoute) ExpectedInPort() (uint8, bool) {
	if s.HopCount == 0 || s.HopCount > MaxTraceHops {
		return 0, false
	}
	return s.InPort[s.HopCount-1], true
}

// IngressKnown reports Flags bit 0.
func (s *SourceRoute) IngressKnown() bool { return s.Flags&SRFlagIngressKnown != 0 }

// IsSwitch reports Flags bit 1.
func (s *SourceRoute) IsSwitch() bool { return s.Flags&SRFlagSwitch != 0 }

// MarshalTo writes the attribute into b[0:158] (vendor data).
func (s *SourceRoute) MarshalTo(b []byte) error {
	if len(b) < SourceRouteSize {
		return errShort("SourceRoute", SourceRouteSize, len(b))
	}
	b[0] = s.ActualInPort
	b[1] = s.HopCount
	copy(b[2:66], s.InPort[:])
	b[66] = s.ExtVersion
	b[67] = s.Flags
	binary.BigEndian.PutUint64(b[68:], uint64(s.NodeGUID))
	binary.BigEndian.PutUint64(b[76:], uint64(s.PortGUID))
	binary.BigEndian.PutUint16(b[84:], s.BaseLID)
	binary.BigEndian.PutUint64(b[86:], s.RecvTimeUnixNs)
	copy(b[94:158], s.NodeDescription[:])
	return nil
}

// UnmarshalBinary decodes a SourceRoute. Only the seed's 66 bytes are
// required; if b holds fewer than 158 bytes or ExtVersion is 0, the
// extension fields are left zero.
func (s *SourceRoute) UnmarshalBinary(b []byte) error {
	if len(b) < SourceRouteSeedSize {
		return errShort("SourceRoute", SourceRouteSeedSize, len(b))
	}
	*s = SourceRoute{}
	s.ActualInPort = b[0]
	s.HopCount = b[1]
	copy(s.InPort[:], b[2:66])
	if len(b) < SourceRouteSize || b[66] == 0 {
		return nil
	}
	s.ExtVersion = b[66]
	s.Flags = b[67]
	s.NodeGUID = GUID(binary.BigEndian.Uint64(b[68:]))
	s.PortGUID = GUID(binary.BigEndian.Uint64(b[76:]))
	s.BaseLID = binary.BigEndian.Uint16(b[84:])
	s.RecvTimeUnixNs = binary.BigEndian.Uint64(b[86:])
	copy(s.NodeDescription[:], b[94:158])
	return nil
}
