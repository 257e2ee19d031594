package linkhealth

import (
	"errors"
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// Bit error rates (docs/metrics.md, "Bit error rate"): per link end, the
// SymbolErrorCounter increments against the bits the link carried
// meanwhile (lane rate × width × time), judged against a target BER per
// kind of link over a window long enough to tell it; and what the port
// says of its errors (PortRcvErrorDetails, PortXmitDiscardDetails) and
// of its FEC (PortExtendedSpeedsCounters).

// DefaultBERTarget is the target BER when Options.BERTarget is 0:
// ibdiagnet's default BER threshold, 1e-12 (docs/metrics.md).
const DefaultBERTarget = 1e-12

// BER states (BERReading.State, Link.BERState).
const (
	BEROK          = "ok"            // over a window long enough, at or below target
	BERAboveTarget = "above_target"  // over a window long enough, above target
	BERNotYetKnown = "not_yet_known" // the window carried fewer than 1/target bits
)

// BERReading is an end's bit error rate over the window between its
// last two readings, and its running totals since the checker first read
// it: what alert rules compute a BER from over any window. It is judged
// by the link (Link.BERState): a reading is shared by every path that
// crosses the port, whatever the link's kind, and never changed once
// made.
type BERReading struct {
	RateBits      float64 `json:"rate_bits"` // the end's width × lane rate
	WindowSeconds float64 `json:"window_seconds"`
	SymbolErrors  uint64  `json:"symbol_errors"` // in the window
	Bits          float64 `json:"bits"`          // carried in the window: RateBits × WindowSeconds
	BER           float64 `json:"ber"`           // SymbolErrors / Bits (0 while Bits is 0)
	// Saturated: the SymbolErrorCounter is at its maximum, SymbolErrors
	// a lower bound (0 once it stays there: its rise is unknown).
	Saturated bool `json:"saturated,omitempty"`
	// Totals: the increments summed since the first reading (resets and
	// saturations do not make them go back), and the bits carried over
	// the windows summed since the reading before the first symbol error
	// or uncorrectable FEC block, but for windows in which a saturated
	// counter hid its rise.
	TotalSymbolErrors uint64  `json:"total_symbol_errors"`
	TotalBits         float64 `json:"total_bits"`
}

// FECReading is a port's PortExtendedSpeedsCounters, summed over lanes.
type FECReading struct {
	RSFEC         bool   `json:"rs_fec"` // read in the RS-FEC layout
	Corrected     uint64 `json:"corrected_blocks"`
	Uncorrectable uint64 `json:"uncorrectable_blocks"`
	// The increments since the previous reading (Known false: none to
	// compare, or a saturated counter that shows no rise hid it), and
	// their totals since the first.
	Known              bool   `json:"known"`
	Saturated          bool   `json:"saturated,omitempty"` // a 32-bit block counter at its maximum: its increment is a lower bound
	CorrectedInc       uint64 `json:"corrected_blocks_increment"`
	UncorrectableInc   uint64 `json:"uncorrectable_blocks_increment"`
	TotalCorrected     uint64 `json:"total_corrected_blocks"`
	TotalUncorrectable uint64 `json:"total_uncorrectable_blocks"`
	Err                string `json:"error,omitempty"`
}

// FECNotReadRSFEC is FECReading.Err where a PMA with RS-FEC counters was
// not asked at FDR or EDR (readFEC).
const FECNotReadRSFEC = "not read: the PMA counts RS-FEC blocks, and whether RS-FEC is active at FDR or EDR only PortInfoExtended says"

// berTotals are a port's running totals (Checker.totals).
type berTotals struct {
	symbolErrors, fecCorr, fecUncorr uint64
	bits                             float64
}

// endRateBits is an end's own rate: its active width × lane rate.
func (e *LinkEnd) endRateBits() float64 {
	if !e.ok {
		return 0
	}
	return float64(widthLanes(e.pi.LinkWidthActive)) * e.speeds.active.LaneBits()
}

// endRead is one end's counter reading under way (counters.go): the
// reads and sums that follow the counters'.
type endRead struct {
	h    *Checker
	p    *trace.Probe
	e    *LinkEnd
	k    portKey
	caps *pmaCaps
	snap *counterSnap
	prev *counterSnap // the previous reading (nil: none)
	r    *PortCounterReading
}

// noteBER sets the reading's BER window and running totals from its
// increments.
func (x *endRead) noteBER() {
	h, e, k, r := x.h, x.e, x.k, x.r
	t, _ := h.totals.Get(k)
	defer func() { h.totals.Put(k, t) }()
	if r.State != CountersOK && r.State != CountersSaturated {
		if t != (berTotals{}) || r.State == CountersFirst {
			r.BER = &BERReading{RateBits: e.endRateBits(), TotalSymbolErrors: t.symbolErrors, TotalBits: t.bits}
		}
		return
	}
	b := &BERReading{RateBits: e.endRateBits(), WindowSeconds: r.SinceSeconds, SymbolErrors: r.inc[0], Saturated: x.snap.sat[0]}
	b.Bits = b.RateBits * b.WindowSeconds
	if b.Bits > 0 {
		b.BER = float64(b.SymbolErrors) / b.Bits
	}
	// A counter stuck at its maximum hides its rise: the window's bits
	// are not counted against errors that cannot be seen.
	if !b.Saturated || b.SymbolErrors > 0 {
		if t.symbolErrors == 0 && t.fecUncorr == 0 {
			// Until the first error, the bits of the last window only:
			// the totals then start at the reading before it, and the
			// first sample of the exporter's series carries the first
			// burst's own rate (docs/metrics.md, "Bit error rate").
			t.bits = 0
		}
		t.symbolErrors += b.SymbolErrors
		t.bits += b.Bits
	}
	b.TotalSymbolErrors, b.TotalBits = t.symbolErrors, t.bits
	r.BER = b
}

// judgeBER sets the link's BER: the worse end's, against the link's
// target. Errors above the target's share of the bits carried are above
// target however short the window (UFM's rule, docs/metrics.md); a
// window that carried fewer than 1/target bits cannot tell that a rate
// is at or below the target: not yet known, never ok.
func (o *Options) judgeBER(l *Link) {
	target := o.berFor(l)
	l.BERTarget = target
	l.BERState = ""
	for _, end := range []struct {
		name string
		e    *LinkEnd
	}{{"a", &l.A}, {"b", &l.B}} {
		c := end.e.Counters
		if c == nil || c.BER == nil {
			continue
		}
		b := c.BER
		st := BEROK
		switch {
		case b.Bits > 0 && b.BER > target:
			st = BERAboveTarget // more errors than the target allows: however short the window
		case b.Bits == 0 || b.Bits < 1/target:
			st = BERNotYetKnown
		case b.Saturated:
			st = BERNotYetKnown // a lower bound at or below target tells nothing
		}
		if l.BERState == "" || berRank[st] > berRank[l.BERState] || (st == l.BERState && b.BER > l.BER) {
			l.BERState, l.BER, l.BEREnd, l.BERWindowSeconds = st, b.BER, end.name, b.WindowSeconds
		}
	}
	if l.BERState == BERAboveTarget {
		l.Healthy = false
		l.Problems = append(l.Problems, fmt.Sprintf("end %s: bit error rate %.2g above the %.2g target over %.0f s",
			l.BEREnd, l.BER, target, l.BERWindowSeconds))
	}
}

// berRank orders BER states, worst last.
var berRank = map[string]int{"": 0, BEROK: 1, BERNotYetKnown: 2, BERAboveTarget: 3}

// berFor is the target BER of link l: its kind's, else the general one,
// else DefaultBERTarget.
func (o *Options) berFor(l *Link) float64 {
	t := o.BERTarget
	k := o.HostLinks
	if l.Kind == KindSwitch {
		k = o.SwitchLinks
	}
	if k.BER > 0 {
		t = k.BER
	}
	if t <= 0 {
		t = DefaultBERTarget
	}
	return t
}

// RcvErrorDetailNames and XmitDiscardDetailNames are the detail
// counters by their perfquery -E and -D names.
var (
	RcvErrorDetailNames = [...]string{"PortLocalPhysicalErrors", "PortMalformedPktErrors", "PortBufferOverrunErrors",
		"PortDLIDMappingErrors", "PortVLMappingErrors", "PortLoopingErrors"}
	XmitDiscardDetailNames = [...]string{"PortInactiveDiscards", "PortNeighborMTUDiscards", "PortSwLifetimeLimitDiscards",
		"PortSwHOQLifetimeLimitDiscards"}
)

// readDetails reads what e's PMA says of the errors that rose:
// PortRcvErrorDetails when PortRcvErrors rose, PortXmitDiscardDetails
// when PortXmitDiscards did (judging values, when they are not 0). A PMA
// that answers that it lacks one is not asked again for SupportTTL.
func (x *endRead) readDetails() {
	h, p, e, caps, snap, r := x.h, x.p, x.e, x.caps, x.snap, x.r
	rose := func(i int) bool {
		switch r.State {
		case CountersOK, CountersSaturated:
			return r.inc[i] > 0
		case CountersFirst:
			return h.opts.LimitValues && snap.v[i] > 0
		}
		return false
	}
	if rose(rcvErrors) && !caps.noRcvDetails {
		var d ibmad.PortRcvErrorDetails
		if err := h.pmaGet(p, e, ibmad.AttrPortRcvErrorDetails, &d); err != nil {
			r.DetailsErr = err.Error()
			if unsupported(err) {
				caps.noRcvDetails = true
				h.pmaCaps.Put(e.NodeGUID, *caps)
			}
		} else {
			r.RcvErrorDetails = named(RcvErrorDetailNames[:], d.PortLocalPhysicalErrors, d.PortMalformedPacketErrors,
				d.PortBufferOverrunErrors, d.PortDLIDMappingErrors, d.PortVLMappingErrors, d.PortLoopingErrors)
		}
	}
	if rose(xmitDiscards) && !caps.noXmitDetails {
		var d ibmad.PortXmitDiscardDetails
		if err := h.pmaGet(p, e, ibmad.AttrPortXmitDiscardDetails, &d); err != nil {
			r.DetailsErr = err.Error()
			if unsupported(err) {
				caps.noXmitDetails = true
				h.pmaCaps.Put(e.NodeGUID, *caps)
			}
		} else {
			r.XmitDiscardDetails = named(XmitDiscardDetailNames[:], d.PortInactiveDiscards, d.PortNeighborMTUDiscards,
				d.PortSwLifetimeLimitDiscards, d.PortSwHOQLifetimeLimitDiscards)
		}
	}
}

func named(names []string, vs ...uint16) map[string]uint64 {
	m := make(map[string]uint64, len(names))
	for i, n := range names {
		m[n] = uint64(vs[i])
	}
	return m
}

// unsupported reports whether err says the PMA lacks the attribute.
func unsupported(err error) bool {
	var se *ibmad.StatusError
	return errors.As(err, &se) && se.Status.Code() == ibmad.StatusMethodAttrUnsupp.Code()
}

// readFEC reads e's PortExtendedSpeedsCounters where the port runs FDR
// or faster and its PMA has not answered that it lacks them. A PMA that
// advertises RS-FEC counters answers in the RS-FEC layout when RS-FEC is
// active, which only PortInfoExtended tells; RS-FEC is the only FEC of
// HDR and faster, so there the RS-FEC layout is read, and at FDR and EDR
// such a PMA is not asked (docs/protocol.md, "PortExtendedSpeedsCounters").
func (x *endRead) readFEC() {
	h, p, e, k, caps, snap, prev, r := x.h, x.p, x.e, x.k, x.caps, x.snap, x.prev, x.r
	if !e.ok || e.speeds.active < SpeedFDR || caps.noExtSpeeds {
		return
	}
	if caps.rsfec && e.speeds.active < SpeedHDR {
		r.FEC = &FECReading{Err: FECNotReadRSFEC}
		return
	}
	d := ibmad.PortExtendedSpeedsCounters{RSFEC: caps.rsfec}
	f := &FECReading{RSFEC: caps.rsfec}
	r.FEC = f
	if err := h.pmaGet(p, e, ibmad.AttrPortExtendedSpeedsCounters, &d); err != nil {
		f.Err = err.Error()
		if unsupported(err) {
			caps.noExtSpeeds = true
			h.pmaCaps.Put(e.NodeGUID, *caps)
		}
		return
	}
	f.Corrected, f.Uncorrectable = d.FECBlocks()
	satCorr, satUncorr := fecSaturated(&d)
	f.Saturated = satCorr || satUncorr
	snap.fec = &[2]uint64{f.Corrected, f.Uncorrectable}
	t, _ := h.totals.Get(k)
	if prev != nil && prev.fec != nil && f.Corrected >= prev.fec[0] && f.Uncorrectable >= prev.fec[1] {
		f.CorrectedInc, f.UncorrectableInc = f.Corrected-prev.fec[0], f.Uncorrectable-prev.fec[1]
		// A saturated counter that shows no rise hides it: unknown, not 0.
		f.Known = !(satCorr && f.CorrectedInc == 0) && !(satUncorr && f.UncorrectableInc == 0)
		t.fecCorr += f.CorrectedInc
		t.fecUncorr += f.UncorrectableInc
		h.totals.Put(k, t)
	}
	f.TotalCorrected, f.TotalUncorrectable = t.fecCorr, t.fecUncorr
}

// fecSaturated says whether a corrected or an uncorrectable FEC block
// counter of d (32 bits a lane, or port-wide with RS-FEC) is at its
// maximum.
func fecSaturated(d *ibmad.PortExtendedSpeedsCounters) (corrected, uncorrectable bool) {
	const full = 1<<32 - 1
	if d.RSFEC {
		return d.PortFECCorrectableBlockCounter == full, d.PortFECUncorrectableBlockCounter == full
	}
	for l := range ibmad.NumLanes {
		corrected = corrected || d.FECCorrectableBlockCounterLane[l] == full
		uncorrectable = uncorrectable || d.FECUncorrectableBlockCounterLane[l] == full
	}
	return corrected, uncorrectable
}
