package sim

import (
	"encoding/binary"
	"sync/atomic"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// pmaAgent is a node's PMA: it answers PerfMgt MADs from the counters of
// the node's ports (counters.go), as what is wrong with it (fault) says.
type pmaAgent struct {
	node  *Node
	fault atomic.Pointer[pmaFault]
}

// pmaFault changes what a node's PMA answers.
type pmaFault struct {
	status ibmad.Status // non-zero: every PerfMgt request gets this status
	legacy bool         // no PortCountersExtended: the saturating counters only
	// noVLWait: no PortVLXmitWaitCounters.
	noVLWait bool
	// misanswer: answers for another attribute or port.
	misanswer *PMAMisanswer
	// capMask2 overrides ClassPortInfo CapabilityMask2 (pmerrors.go).
	capMask2 *uint32
	// rsfec: PortExtendedSpeedsCounters in the RS-FEC layout, advertised;
	// noExtSpeeds: not answered.
	rsfec, noExtSpeeds bool
	// noIETF: PortCountersExtended without the unicast and multicast
	// counters (CapabilityMask bit 10 instead of bit 9).
	noIETF bool
}

// PMAMisanswer is a PMA that answers for something other than it was
// asked, as a buggy or confused PMA, or a stale answer, would: the answer
// is well formed, with status 0, but names another attribute or another
// port (docs/protocol.md, "What a PMA answer must match").
type PMAMisanswer struct {
	// Attrs maps an asked attribute to the one answered instead (its
	// layout, and its ID in the answer's header); attributes not in the
	// map are answered as asked.
	Attrs map[ibmad.AttrID]ibmad.AttrID
	// Ports maps an attribute with a PortSelect (PortCounters,
	// PortCountersExtended, PortVLXmitWaitCounters) to the port answered
	// for whatever port the request selects: that port's counters, and
	// its number in the answer's PortSelect. The attribute is the one
	// answered (after Attrs).
	Ports map[ibmad.AttrID]uint8
	// NoPortSelect: the answer of a port-counter attribute carries the
	// asked port's counters but PortSelect 0, as a PMA that fills in
	// the counters only does (docs/protocol.md, "What a PMA answer must
	// match").
	NoPortSelect bool
}

// setFault changes what the PMA answers by set.
func (a *pmaAgent) setFault(set func(*pmaFault)) {
	p := pmaFault{}
	if old := a.fault.Load(); old != nil {
		p = *old
	}
	set(&p)
	a.fault.Store(&p)
}

// answer answers PerfMgt ClassPortInfo, PortCounters,
// PortCountersExtended and PortVLXmitWaitCounters Gets (and Sets, which
// clear the port's counters) for any port of the node. Counters move as
// simulated MADs cross links; PortXmitWait as a congestion fault makes
// it. m holds the request and becomes the response.
func (a *pmaAgent) answer(m *ibmad.MAD) {
	node := a.node
	meth := m.Method()
	m.SetMethod(ibmad.MethodGetResp)
	if meth != ibmad.MethodGet && meth != ibmad.MethodSet {
		m.SetStatus(ibmad.StatusMethodUnsupported)
		return
	}
	fault := a.fault.Load()
	if fault != nil && fault.status != 0 {
		m.SetStatus(fault.status)
		return
	}
	defer a.misanswer(m)()
	data := m.PerfMgtData()
	switch m.AttrID() {
	case ibmad.AttrClassPortInfo:
		cpi := ibmad.ClassPortInfo{BaseVersion: 1, ClassVersion: 1, RespTimeValue: 18,
			CapabilityMask:  ibmad.CPICapPMAllPort | ibmad.CPICapPMExtWidth | ibmad.CPICapPMXmitWait,
			CapabilityMask2: ibmad.CPICap2PMAddlPortCtrsExt} // IsAdditionalPortCountersExtendedSupported
		if fault != nil && fault.capMask2 != nil {
			cpi.CapabilityMask2 = *fault.capMask2
		}
		if fault != nil && fault.rsfec {
			cpi.CapabilityMask |= ibmad.CPICapPMRSFEC
		}
		if fault != nil && fault.noIETF {
			cpi.CapabilityMask = cpi.CapabilityMask&^ibmad.CPICapPMExtWidth | ibmad.CPICapPMExtNoIETF
		}
		if fault != nil && fault.legacy {
			cpi.CapabilityMask &^= ibmad.CPICapPMExtWidth | ibmad.CPICapPMExtNoIETF
			cpi.CapabilityMask2 = 0
		}
		clear(data)
		_ = cpi.MarshalTo(data)
	case ibmad.AttrPortCounters, ibmad.AttrPortCountersExtended, ibmad.AttrPortVLXmitWaitCounters,
		ibmad.AttrPortRcvErrorDetails, ibmad.AttrPortXmitDiscardDetails, ibmad.AttrPortExtendedSpeedsCounters:
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
			if fault != nil && fault.noVLWait {
				m.SetStatus(ibmad.StatusMethodAttrUnsupp)
				return
			}
			answerVLXmitWaits(data, ports, meth == ibmad.MethodSet)
			break
		}
		if !answerPortAttr(m, fault, ports, meth == ibmad.MethodSet) {
			return
		}
	default:
		m.SetStatus(ibmad.StatusMethodAttrUnsupp)
		return
	}
	m.SetStatus(ibmad.StatusOK)
}

// answerPortAttr answers a port-counter attribute other than
// PortVLXmitWaitCounters for ports into m; false: m has the error status.
func answerPortAttr(m *ibmad.MAD, fault *pmaFault, ports []*Port, set bool) bool {
	data := m.PerfMgtData()
	switch attr := m.AttrID(); attr {
	case ibmad.AttrPortCounters:
		answerPortCounters(attr, data, ports, set)
	case ibmad.AttrPortCountersExtended:
		answerPortCounters(attr, data, ports, set)
		if fault != nil && fault.capMask2 != nil && *fault.capMask2&ibmad.CPICap2PMAddlPortCtrsExt == 0 {
			clear(data[72:]) // the data counters only, as ibsim answers
		}
		if fault != nil && fault.noIETF {
			clear(data[40:72]) // no unicast and multicast counters
		}
	case ibmad.AttrPortExtendedSpeedsCounters:
		if fault != nil && fault.noExtSpeeds {
			m.SetStatus(ibmad.StatusMethodAttrUnsupp)
			return false
		}
		answerDetails(attr, data, ports, set, fault != nil && fault.rsfec)
	default:
		answerDetails(attr, data, ports, set, false)
	}
	return true
}

// answerPortCounters answers PortCounters or PortCountersExtended (attr) for
// ports into data, the sums of their counters; set clears them first.
func answerPortCounters(attr ibmad.AttrID, data []byte, ports []*Port, set bool) {
	sel := data[1]
	if set {
		for _, p := range ports {
			p.ctr.reset()
		}
	}
	var s counterSums
	for _, p := range ports {
		s.add(&p.ctr)
	}
	clear(data)
	if attr == ibmad.AttrPortCounters {
		pc := ibmad.PortCounters{PortSelect: sel, SymbolErrorCounter: sat16(s.symbolErrors),
			LinkDownedCounter: sat8(s.linkDowned), PortRcvErrors: sat16(s.rcvErrors),
			PortRcvSwitchRelayErrors: sat16(s.switchRelay), PortXmitDiscards: sat16(s.xmitDiscards),
			PortXmitData: sat32(s.xmitData), PortRcvData: sat32(s.rcvData),
			PortXmitPkts: sat32(s.xmitPkts), PortRcvPkts: sat32(s.rcvPkts), PortXmitWait: sat32(s.xmitWait)}
		_ = pc.MarshalTo(data)
		return
	}
	pc := ibmad.PortCountersExtended{PortSelect: sel, PortXmitData: s.xmitData, PortRcvData: s.rcvData,
		PortXmitPkts: s.xmitPkts, PortRcvPkts: s.rcvPkts, PortUnicastXmitPkts: s.xmitPkts,
		PortUnicastRcvPkts: s.rcvPkts, SymbolErrorCounter: s.symbolErrors, LinkDownedCounter: s.linkDowned,
		PortRcvErrors: s.rcvErrors, PortRcvSwitchRelayErrors: s.switchRelay, PortXmitDiscards: s.xmitDiscards,
		PortXmitWait: s.xmitWait}
	_ = pc.MarshalTo(data)
}

// answerVLXmitWaits answers PortVLXmitWaitCounters for ports into data (a Set
// clears the waits first).
func answerVLXmitWaits(data []byte, ports []*Port, set bool) {
	a := ibmad.PortVLXmitWaitCounters{PortSelect: data[1]}
	var sums [ibmad.NumVLs]uint64
	for _, p := range ports {
		if set {
			p.ctr.cong.reset()
		}
		for vl := range sums {
			sums[vl] += p.ctr.cong.vlXmitWait(vl)
		}
	}
	for vl, s := range sums {
		a.PortVLXmitWait[vl] = sat16(s)
	}
	clear(data)
	_ = a.MarshalTo(data)
}

// misanswer rewrites the request m, before the PMA answers it, into what
// a misanswering PMA answers instead, and returns what to do to the
// answer once made.
func (a *pmaAgent) misanswer(m *ibmad.MAD) (after func()) {
	after = func() {}
	p := a.fault.Load()
	if p == nil || p.misanswer == nil {
		return after
	}
	if to, ok := p.misanswer.Attrs[m.AttrID()]; ok {
		binary.BigEndian.PutUint16(m[16:], uint16(to))
	}
	switch attr := m.AttrID(); attr {
	case ibmad.AttrPortCounters, ibmad.AttrPortCountersExtended, ibmad.AttrPortVLXmitWaitCounters,
		ibmad.AttrPortRcvErrorDetails, ibmad.AttrPortXmitDiscardDetails, ibmad.AttrPortExtendedSpeedsCounters:
		if sel, ok := p.misanswer.Ports[attr]; ok {
			m.PerfMgtData()[1] = sel
		}
		if p.misanswer.NoPortSelect {
			after = func() { m.PerfMgtData()[1] = 0 }
		}
	}
	return after
}
