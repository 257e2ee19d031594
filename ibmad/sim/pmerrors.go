package sim

import (
	"sync/atomic"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// PortErrors are errors to add to a port's PerfMgt counters
// (AddPortErrors), as ibsim's console PerformanceSet sets them: the basic
// counters, what PortRcvErrorDetails and PortXmitDiscardDetails (0x15,
// 0x16) say of them, and the FEC blocks PortExtendedSpeedsCounters (0x1F)
// counts (docs/protocol.md).
type PortErrors struct {
	SymbolErrors, RcvErrors, XmitDiscards, LinkDowned uint64
	// RcvErrorDetails: PortLocalPhysicalErrors, PortMalformedPacketErrors,
	// PortBufferOverrunErrors, PortDLIDMappingErrors, PortVLMappingErrors,
	// PortLoopingErrors, in that (the attribute's) order.
	RcvErrorDetails [6]uint64
	// XmitDiscardDetails: PortInactiveDiscards, PortNeighborMTUDiscards,
	// PortSwLifetimeLimitDiscards, PortSwHOQLifetimeLimitDiscards.
	XmitDiscardDetails [4]uint64
	// FECCorrected and FECUncorrectable are FEC blocks, counted on lane 0
	// (or port-wide with RS-FEC).
	FECCorrected, FECUncorrectable uint64
}

// errorDetails are a port's detail and FEC counters.
type errorDetails struct {
	rcv       [6]atomic.Uint64
	xmit      [4]atomic.Uint64
	fecCorr   atomic.Uint64
	fecUncorr atomic.Uint64
}

func (d *errorDetails) reset() {
	for i := range d.rcv {
		d.rcv[i].Store(0)
	}
	for i := range d.xmit {
		d.xmit[i].Store(0)
	}
	d.fecCorr.Store(0)
	d.fecUncorr.Store(0)
}

// detailSums are errorDetails of one or more ports, summed.
type detailSums struct {
	rcv                [6]uint64
	xmit               [4]uint64
	fecCorr, fecUncorr uint64
}

func (s *detailSums) add(d *errorDetails) {
	for i := range s.rcv {
		s.rcv[i] += d.rcv[i].Load()
	}
	for i := range s.xmit {
		s.xmit[i] += d.xmit[i].Load()
	}
	s.fecCorr += d.fecCorr.Load()
	s.fecUncorr += d.fecUncorr.Load()
}

// answerDetails answers PortRcvErrorDetails, PortXmitDiscardDetails or
// PortExtendedSpeedsCounters (attr) for ports into data, their counters
// summed and saturated; set clears them first.
func answerDetails(attr ibmad.AttrID, data []byte, ports []*Port, set, rsfec bool) {
	sel := data[1]
	var s detailSums
	for _, p := range ports {
		if set {
			p.ctr.details.reset()
		}
		s.add(&p.ctr.details)
	}
	clear(data)
	switch attr {
	case ibmad.AttrPortRcvErrorDetails:
		d := ibmad.PortRcvErrorDetails{PortSelect: sel, PortLocalPhysicalErrors: sat16(s.rcv[0]),
			PortMalformedPacketErrors: sat16(s.rcv[1]), PortBufferOverrunErrors: sat16(s.rcv[2]),
			PortDLIDMappingErrors: sat16(s.rcv[3]), PortVLMappingErrors: sat16(s.rcv[4]), PortLoopingErrors: sat16(s.rcv[5])}
		_ = d.MarshalTo(data)
	case ibmad.AttrPortXmitDiscardDetails:
		d := ibmad.PortXmitDiscardDetails{PortSelect: sel, PortInactiveDiscards: sat16(s.xmit[0]),
			PortNeighborMTUDiscards: sat16(s.xmit[1]), PortSwLifetimeLimitDiscards: sat16(s.xmit[2]),
			PortSwHOQLifetimeLimitDiscards: sat16(s.xmit[3])}
		_ = d.MarshalTo(data)
	default:
		d := ibmad.PortExtendedSpeedsCounters{RSFEC: rsfec, PortSelect: sel}
		if rsfec {
			d.PortFECCorrectableBlockCounter, d.PortFECUncorrectableBlockCounter = sat32(s.fecCorr), sat32(s.fecUncorr)
		} else {
			d.FECCorrectableBlockCounterLane[0], d.FECUncorrectableBlockCounterLane[0] = sat32(s.fecCorr), sat32(s.fecUncorr)
		}
		_ = d.MarshalTo(data)
	}
}
