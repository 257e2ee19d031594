package ibmad

import "fmt"

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
		}
	case c == ClassIBTracer && a == AttrSourceRoute:
		return "SourceRoute"
	}
	return fmt.Sprintf("attr 0x%04x", uint16(a))
}

// AttrName names attribute a of class c ("NodeInfo", "PathRecord", ...).
func AttrName(c MgmtClass, a AttrID) string { return a.name(c) }
