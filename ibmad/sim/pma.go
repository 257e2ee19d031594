package sim

import (
	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// pma answers PerfMgt ClassPortInfo, PortCounters,
// PortCountersExtended and PortVLXmitWaitCounters Gets (and Sets, which
// clear the port's counters) for any port of node. Counters move as
// simulated MADs cross links; PortXmitWait as congestion.go makes it.
func (f *Fabric) pma(node *Node, m *ibmad.MAD) {
	meth := m.Method()
	m.SetMethod(ibmad.MethodGetResp)
	if meth != ibmad.MethodGet && meth != ibmad.MethodSet {
		m.SetStatus(ibmad.StatusMethodUnsupported)
		return
	}
	if node.pmaFaulted(m) {
		return
	}
	defer node.pmaMisanswer(m)() // pma_misanswer.go
	data := m.PerfMgtData()
	switch m.AttrID() {
	case ibmad.AttrClassPortInfo:
		cpi := ibmad.ClassPortInfo{BaseVersion: 1, ClassVersion: 1, RespTimeValue: 18,
			CapabilityMask:  ibmad.CPICapPMAllPort | ibmad.CPICapPMExtWidth | ibmad.CPICapPMXmitWait,
			CapabilityMask2: ibmad.CPICap2PMAddlPortCtrsExt} // IsAdditionalPortCountersExtendedSupported
		node.pmaLegacy(&cpi)
		clear(data)
		_ = cpi.MarshalTo(data)
	case ibmad.AttrPortCounters, ibmad.AttrPortCountersExtended, ibmad.AttrPortVLXmitWaitCounters:
		sel := data[1]
		var ports []*Port
		switch {
		case sel == ibmad.AllPortSelect:
			ports = node.Ports[1:]
		case int(sel) <= node.NumPorts() && (sel != 0 || node.IsSwitch()):
			ports = node.Ports[sel : sel+1]
		default:
			m.SetStatus(ibmad.StatusInvalidField)
			return
		}
		if m.AttrID() == ibmad.AttrPortVLXmitWaitCounters {
			if !node.pmaVLXmitWait(m, ports, meth == ibmad.MethodSet) {
				return
			}
			break
		}
		if meth == ibmad.MethodSet {
			for _, p := range ports {
				p.ctr.reset()
			}
		}
		var s counterSums
		for _, p := range ports {
			s.add(&p.ctr)
		}
		clear(data)
		if m.AttrID() == ibmad.AttrPortCounters {
			pc := ibmad.PortCounters{PortSelect: sel, SymbolErrorCounter: sat16(s.symbolErrors),
				LinkDownedCounter: sat8(s.linkDowned), PortRcvErrors: sat16(s.rcvErrors),
				PortRcvSwitchRelayErrors: sat16(s.switchRelay), PortXmitDiscards: sat16(s.xmitDiscards),
				PortXmitData: sat32(s.xmitData), PortRcvData: sat32(s.rcvData),
				PortXmitPkts: sat32(s.xmitPkts), PortRcvPkts: sat32(s.rcvPkts), PortXmitWait: sat32(s.xmitWait)}
			_ = pc.MarshalTo(data)
		} else {
			pc := ibmad.PortCountersExtended{PortSelect: sel, PortXmitData: s.xmitData, PortRcvData: s.rcvData,
				PortXmitPkts: s.xmitPkts, PortRcvPkts: s.rcvPkts, PortUnicastXmitPkts: s.xmitPkts,
				PortUnicastRcvPkts: s.rcvPkts, SymbolErrorCounter: s.symbolErrors, LinkDownedCounter: s.linkDowned,
				PortRcvErrors: s.rcvErrors, PortRcvSwitchRelayErrors: s.switchRelay, PortXmitDiscards: s.xmitDiscards,
				PortXmitWait: s.xmitWait}
			_ = pc.MarshalTo(data)
		}
	default:
		m.SetStatus(ibmad.StatusMethodAttrUnsupp)
		return
	}
	m.SetStatus(ibmad.StatusOK)
}

type counterSums struct {
	xmitPkts, rcvPkts, xmitData, rcvData, xmitDiscards, rcvErrors, linkDowned, switchRelay, symbolErrors uint64
	xmitWait                                                                                             uint64
}

func (s *counterSums) add(c *portCounters) {
	s.xmitPkts += c.xmitPkts.Load()
	s.rcvPkts += c.rcvPkts.Load()
	s.xmitData += c.xmitData.Load()
	s.rcvData += c.rcvData.Load()
	s.xmitDiscards += c.xmitDiscards.Load()
	s.rcvErrors += c.rcvErrors.Load() + c.climbed()
	s.linkDowned += c.linkDowned.Load()
	s.switchRelay += c.switchRelay.Load()
	s.symbolErrors += c.symbolErrors.Load() + c.climbed()
	s.xmitWait += c.cong.xmitWait()
}

func (c *portCounters) reset() {
	for _, a := range []*atomicU64{&c.xmitPkts, &c.rcvPkts, &c.xmitData, &c.rcvData, &c.xmitDiscards,
		&c.rcvErrors, &c.linkDowned, &c.switchRelay, &c.symbolErrors} {
		a.Store(0)
	}
	c.restartClimb()
	c.cong.reset()
}

func sat8(v uint64) uint8 {
	if v > 0xFF {
		return 0xFF
	}
	return uint8(v)
}

func sat16(v uint64) uint16 {
	if v > 0xFFFF {
		return 0xFFFF
	}
	return uint16(v)
}

// sat32 saturates as the 32-bit PortCounters do (IBA 16.1.3.5).
func sat32(v uint64) uint32 {
	if v > 0xFFFFFFFF {
		return 0xFFFFFFFF
	}
	return uint32(v)
}
