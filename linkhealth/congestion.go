package linkhealth

import (
	"errors"
	"fmt"
	"slices"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// DefaultXmitWaitTickSymbols is the PortXmitWait tick assumed when
// Options.XmitWaitTickSymbols is 0: 8 symbol times, a PortSamplesControl
// Tick of 7 (docs/metrics.md, "Congestion").
const DefaultXmitWaitTickSymbols = 8

// VLXmitWaitReading is a port's PortVLXmitWaitCounters: what each VL
// waited (docs/protocol.md, "PortVLXmitWaitCounters").
type VLXmitWaitReading struct {
	// Values are the 16 counters, VL0 first; Increments, when an earlier
	// reading compares, their rise since it.
	Values     []uint64 `json:"values,omitempty"`
	Increments []uint64 `json:"increments,omitempty"`
	// Saturated lists the VLs whose 16-bit counter is at its maximum.
	Saturated []int  `json:"saturated,omitempty"`
	Err       string `json:"error,omitempty"`
}

// TopVL is the VL that waited most: by increment when known, else (no
// earlier reading, or the 16-bit counters stuck at their maximum) by
// value; -1 when none waited, or when several counters are stuck at
// their maximum (their values cannot tell which waits most).
func (v *VLXmitWaitReading) TopVL() int {
	if v == nil {
		return -1
	}
	if top := largest(v.Increments); top >= 0 {
		return top
	}
	top := largest(v.Values)
	if top >= 0 && v.Values[top] == 0xFFFF && slices.Index(v.Values[top+1:], 0xFFFF) >= 0 {
		return -1
	}
	return top
}

// largest is the index of the largest non-zero count (-1: none).
func largest(w []uint64) int {
	top := -1
	for i, n := range w {
		if n > 0 && (top < 0 || n > w[top]) {
			top = i
		}
	}
	return top
}

// readVLXmitWait reads e's PortVLXmitWaitCounters when its PortXmitWait
// rose since the previous reading (or, judging values, is not 0): the
// VL that waits. A PMA that answers that it lacks the attribute (no
// ClassPortInfo bit announces it) is not asked again for SupportTTL.
func (h *Checker) readVLXmitWait(p *trace.Probe, e *LinkEnd, caps pmaCaps, snap *counterSnap, prev counterSnap, r *PortCounterReading) {
	rose := false
	switch r.State {
	case CountersOK, CountersSaturated:
		rose = r.inc[xmitWait] > 0
	case CountersFirst:
		rose = h.opts.LimitValues && snap.v[xmitWait] > 0
	}
	if !caps.xmitWait || caps.noVLWait || !rose {
		return
	}
	var a ibmad.PortVLXmitWaitCounters
	vr := &VLXmitWaitReading{}
	r.VLXmitWait = vr
	if err := h.pmaGet(p, e, ibmad.AttrPortVLXmitWaitCounters, &a); err != nil {
		vr.Err = err.Error()
		var se *ibmad.StatusError
		if errors.As(err, &se) && se.Status.Code() == ibmad.StatusMethodAttrUnsupp.Code() {
			caps.noVLWait = true
			h.pmaCaps.Put(e.NodeGUID, caps)
		}
		return
	}
	vl := new([ibmad.NumVLs]uint64)
	for i, v := range a.PortVLXmitWait {
		vl[i] = uint64(v)
		if v == 0xFFFF {
			vr.Saturated = append(vr.Saturated, i)
		}
	}
	snap.vl = vl
	vr.Values = vl[:]
	if prev.vl == nil {
		return
	}
	inc := make([]uint64, ibmad.NumVLs)
	for i := range vl {
		if vl[i] < prev.vl[i] {
			return // cleared or reset: no increments
		}
		inc[i] = vl[i] - prev.vl[i]
	}
	vr.Increments = inc
}

// symbolSeconds is the time one byte takes on one lane at speed s: 10
// bits at SDR to QDR (8b/10b), 66/8 bits from FDR on (64b/66b); 0 for
// an unknown speed.
func symbolSeconds(s Speed) float64 {
	b := s.LaneBits()
	switch {
	case b == 0:
		return 0
	case s <= SpeedQDR:
		return 10 / b
	default:
		return 66.0 / 8 / b
	}
}

// endRatio is an end's PortXmitWait increment as a share of the ticks
// between its two readings; ok is false when it is unknown: no two
// comparable readings, a PMA that does not count PortXmitWait, or a
// counter stuck at its maximum.
func endRatio(r *PortCounterReading, tick float64) (ratio float64, ok bool) {
	if r == nil || (r.State != CountersOK && r.State != CountersSaturated) || r.SinceSeconds <= 0 {
		return 0, false
	}
	if _, ok := r.Increments[CounterNames[xmitWait]]; !ok {
		return 0, false // the PMA does not count PortXmitWait
	}
	if r.inc[xmitWait] == 0 && slices.Contains(r.Saturated, CounterNames[xmitWait]) {
		return 0, false // stuck at its maximum: how long it waited is unknown
	}
	return float64(r.inc[xmitWait]) * tick / r.SinceSeconds, true
}

// judgeCongestion sets a link's XmitWaitRatio from its ends' PortXmitWait
// increments, and makes an otherwise ok link congested when the ratio
// reaches Options.XmitWaitLimit. l.Speed must be known.
func (h *Checker) judgeCongestion(l *Link) {
	sym := symbolSeconds(l.Speed)
	if sym == 0 {
		return
	}
	ticks := h.opts.XmitWaitTickSymbols
	if ticks <= 0 {
		ticks = DefaultXmitWaitTickSymbols
	}
	tick := float64(ticks) * sym
	best, known := -1.0, true
	for _, end := range []struct {
		name string
		e    *LinkEnd
	}{{"a", &l.A}, {"b", &l.B}} {
		ratio, ok := endRatio(end.e.Counters, tick)
		if !ok {
			known = false
			continue
		}
		if ratio <= best {
			continue
		}
		best = ratio
		l.XmitWaitEnd, l.XmitWaitVL = "", nil
		if ratio > 0 {
			l.XmitWaitEnd = end.name
			if vl := end.e.Counters.VLXmitWait.TopVL(); vl >= 0 {
				l.XmitWaitVL = &vl
			}
		}
	}
	if best < 0 {
		return
	}
	// With one end unknown, the other's ratio is a lower bound: enough to
	// say congested, not to say the link did not wait.
	l.XmitWaitRatio, l.XmitWaitKnown = best, known
	if h.opts.XmitWaitLimit > 0 && best >= h.opts.XmitWaitLimit {
		l.Congested = true
		l.Problems = append(l.Problems, fmt.Sprintf("end %s waited to transmit %.1f%% of the interval (limit %.1f%%)",
			l.XmitWaitEnd, 100*best, 100*h.opts.XmitWaitLimit))
		if l.Verdict == LinkOK {
			l.Verdict = LinkCongested
		}
	}
}
