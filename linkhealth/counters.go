package linkhealth

import (
	"fmt"
	"sort"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// CounterNames are the PerfMgt error counters read at both ends of every
// link, by their PortCounters field names (perfquery's and the
// ibqueryerrors threshold file's).
var CounterNames = [numCounters]string{"SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter",
	"PortRcvErrors", "PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors", "PortXmitDiscards",
	"PortXmitConstraintErrors", "PortRcvConstraintErrors", "LocalLinkIntegrityErrors",
	"ExcessiveBufferOverrunErrors", "VL15Dropped", "PortXmitWait"}

const (
	numCounters  = 13
	rcvErrors    = 3  // index of PortRcvErrors
	xmitDiscards = 6  // index of PortXmitDiscards
	xmitWait     = 12 // index of PortXmitWait: congestion, not an error
)

// counterBits are the widths of the PortCounters fields; they saturate at
// all ones (docs/protocol.md).
var counterBits = [numCounters]uint{16, 8, 8, 16, 16, 16, 16, 8, 8, 4, 4, 16, 32}

// Counter reading states (PortCounterReading.State).
const (
	CountersFirst       = "first"       // no earlier comparable reading: no increments yet
	CountersOK          = "ok"          // increments since the previous reading
	CountersSaturated   = "saturated"   // a counter is at its maximum: its increment is a lower bound
	CountersReset       = "reset"       // a counter went backwards (port reset or cleared): no increments
	CountersUnavailable = "unavailable" // the PMA did not answer, or answered with an error
)

// PortCounterReading is one reading of a port's error counters, and what
// changed since the previous one.
type PortCounterReading struct {
	Values       map[string]uint64 `json:"values,omitempty"`
	Extended     bool              `json:"extended"` // 64-bit, from PortCountersExtended
	State        string            `json:"state"`
	Increments   map[string]uint64 `json:"increments,omitempty"`
	SinceSeconds float64           `json:"since_seconds,omitempty"`
	Saturated    []string          `json:"saturated,omitempty"`
	Err          string            `json:"error,omitempty"`
	// VLXmitWait is the port's per-VL waits, read when its PortXmitWait
	// rose (congestion.go).
	VLXmitWait *VLXmitWaitReading `json:"vl_xmit_wait,omitempty"`
	// Data are PortCountersExtended's data counters by perfquery -x's
	// names, read with Options.DataCounters where the PMA has the
	// attribute.
	Data map[string]uint64 `json:"data,omitempty"`
	// RcvErrorDetails and XmitDiscardDetails are PortRcvErrorDetails and
	// PortXmitDiscardDetails, read when PortRcvErrors or PortXmitDiscards
	// rose (ber.go); DetailsErr why one could not be.
	RcvErrorDetails    map[string]uint64 `json:"rcv_error_details,omitempty"`
	XmitDiscardDetails map[string]uint64 `json:"xmit_discard_details,omitempty"`
	DetailsErr         string            `json:"details_error,omitempty"`
	// FEC is PortExtendedSpeedsCounters, read at FDR and faster; BER the
	// end's bit error rate (ber.go).
	FEC *FECReading `json:"fec,omitempty"`
	BER *BERReading `json:"ber,omitempty"`

	inc [numCounters]uint64
	at  time.Time // when it was read (the tracer's clock)
}

// At is when the reading was made (the tracer's clock): readings shared
// across destinations (Options.Share) are one reading, one time, and a
// later time is a newer reading.
func (r *PortCounterReading) At() time.Time { return r.at }

// counterSnap is a raw reading, kept per port for the next increments.
type counterSnap struct {
	v   [numCounters]uint64
	sat [numCounters]bool
	ext bool
	at  time.Time
	vl  *[ibmad.NumVLs]uint64 // PortVLXmitWaitCounters, when read (congestion.go)
	fec *[2]uint64            // FEC blocks corrected and uncorrectable, when read (ber.go)
}

type counterRead struct {
	r *PortCounterReading
}

type pmaCaps struct {
	extWidth bool // PortCountersExtended
	ietf     bool // with its unicast and multicast counters (CapabilityMask bit 9)
	ext      bool // PortCountersExtended with the 64-bit error counters
	xmitWait bool
	rsfec    bool // PortExtendedSpeedsCounters has an RS-FEC layout (ber.go)
	// The PMA answered that it lacks PortVLXmitWaitCounters,
	// PortRcvErrorDetails, PortXmitDiscardDetails or
	// PortExtendedSpeedsCounters.
	noVLWait, noRcvDetails, noXmitDetails, noExtSpeeds bool
}

// counterKey keys the shared counter readings (Options.Share). A port's
// reading is kept under anySL and serves every path that crosses the
// port, whatever its SL: a counter is a counter. A reading that failed is
// kept under the SL of the probe that made it and serves only the paths
// on that SL: on a QoS fabric a path on another SL may reach the PMA
// where this one could not, and reads it itself (docs/protocol.md, "SL
// and GRH"). A port costs at most one failed reading per SL an interval.
type counterKey struct {
	portKey
	sl uint8
}

// anySL is the counterKey SL of a reading made: it serves every SL.
const anySL = 0xff

// readCounters reads (or reuses, within Share) a link end's counters.
func (h *Checker) readCounters(p *trace.Probe, e *LinkEnd) *PortCounterReading {
	k := portKey{e.NodeGUID, e.Port}
	defer h.lock(k)()
	read, failed := counterKey{k, anySL}, counterKey{k, p.SL()}
	if h.opts.Share > 0 {
		if c, ok := h.counters.Get(read); ok {
			return c.r
		}
		if c, ok := h.counters.Get(failed); ok {
			return c.r
		}
	}
	r := h.readCountersNow(p, e, k)
	if h.opts.Share > 0 { // kept only to be shared (Options.Share)
		key := read
		if r.State == CountersUnavailable {
			key = failed
		}
		h.counters.Put(key, counterRead{r})
	}
	return r
}

func (h *Checker) readCountersNow(p *trace.Probe, e *LinkEnd, k portKey) *PortCounterReading {
	r := &PortCounterReading{State: CountersUnavailable, at: h.now()}
	if e.LID == 0 {
		r.Err = "no LID to send PerfMgt MADs to"
		return r
	}
	caps, err := h.pma(p, e)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	snap, err := h.readSnap(p, e, caps, r)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	snap.at = h.now()
	if !caps.xmitWait {
		snap.v[xmitWait], snap.sat[xmitWait] = 0, false
	}
	prev, ok := h.prev.Get(k)
	if ok && h.opts.MaxWindow > 0 && snap.at.Sub(prev.at) > h.opts.MaxWindow {
		prev, ok = counterSnap{}, false // too old to say what rose now (Options.MaxWindow)
	}
	defer func() { h.prev.Put(k, snap) }() // with the VL waits read below
	r.Values, r.Extended = map[string]uint64{}, snap.ext
	for i, n := range CounterNames {
		if i == xmitWait && !caps.xmitWait {
			continue
		}
		r.Values[n] = snap.v[i]
		if snap.sat[i] {
			r.Saturated = append(r.Saturated, n)
		}
	}
	r.State = CountersFirst
	if ok && prev.ext == snap.ext {
		r.State = compare(prev, snap, r)
	}
	h.readVLXmitWait(p, e, caps, &snap, prev, r)
	x := &endRead{h: h, p: p, e: e, k: k, caps: &caps, snap: &snap, r: r} // ber.go
	if ok {
		x.prev = &prev
	}
	x.readDetails()
	x.readFEC()
	x.noteBER()
	return r
}

// readSnap reads e's error counters: from PortCountersExtended when its
// PMA has the 64-bit error counters, else from PortCounters; and, with
// Options.DataCounters, PortCountersExtended's data counters wherever the
// PMA has the attribute (into r.Data).
func (h *Checker) readSnap(p *trace.Probe, e *LinkEnd, caps pmaCaps, r *PortCounterReading) (counterSnap, error) {
	var snap counterSnap
	if caps.ext || (caps.extWidth && h.opts.DataCounters) {
		var pc ibmad.PortCountersExtended
		if err := h.pmaGet(p, e, ibmad.AttrPortCountersExtended, &pc); err != nil {
			return snap, err
		}
		if h.opts.DataCounters {
			r.Data = map[string]uint64{"PortXmitData": pc.PortXmitData, "PortRcvData": pc.PortRcvData,
				"PortXmitPkts": pc.PortXmitPkts, "PortRcvPkts": pc.PortRcvPkts, "PortUnicastXmitPkts": pc.PortUnicastXmitPkts,
				"PortUnicastRcvPkts": pc.PortUnicastRcvPkts, "PortMulticastXmitPkts": pc.PortMulticastXmitPkts,
				"PortMulticastRcvPkts": pc.PortMulticastRcvPkts}
			if !caps.ietf { // CapabilityMask bit 10 only: no unicast and multicast counters
				for _, n := range [...]string{"PortUnicastXmitPkts", "PortUnicastRcvPkts", "PortMulticastXmitPkts", "PortMulticastRcvPkts"} {
					delete(r.Data, n)
				}
			}
		}
		if caps.ext {
			snap.ext = true
			snap.v = [numCounters]uint64{pc.SymbolErrorCounter, pc.LinkErrorRecoveryCounter, pc.LinkDownedCounter,
				pc.PortRcvErrors, pc.PortRcvRemotePhysicalErrors, pc.PortRcvSwitchRelayErrors, pc.PortXmitDiscards,
				pc.PortXmitConstraintErrors, pc.PortRcvConstraintErrors, pc.LocalLinkIntegrityErrors,
				pc.ExcessiveBufferOverrunErrors, pc.VL15Dropped, pc.PortXmitWait}
			return snap, nil
		}
	}
	var pc ibmad.PortCounters
	if err := h.pmaGet(p, e, ibmad.AttrPortCounters, &pc); err != nil {
		return snap, err
	}
	snap.v = [numCounters]uint64{uint64(pc.SymbolErrorCounter), uint64(pc.LinkErrorRecoveryCounter),
		uint64(pc.LinkDownedCounter), uint64(pc.PortRcvErrors), uint64(pc.PortRcvRemotePhysicalErrors),
		uint64(pc.PortRcvSwitchRelayErrors), uint64(pc.PortXmitDiscards), uint64(pc.PortXmitConstraintErrors),
		uint64(pc.PortRcvConstraintErrors), uint64(pc.LocalLinkIntegrityErrors),
		uint64(pc.ExcessiveBufferOverrunErrors), uint64(pc.VL15Dropped), uint64(pc.PortXmitWait)}
	for i, b := range counterBits {
		snap.sat[i] = snap.v[i] == 1<<b-1
	}
	return snap, nil
}

// compare sets r's increments from prev to cur and returns the state. A
// counter that went backwards was reset (a port reset, or someone cleared
// it): the reading gives no increments, never a false rise. A counter
// stuck at its maximum rose by an unknown amount: its increment counts
// what could be seen.
func compare(prev, cur counterSnap, r *PortCounterReading) string {
	for i := range cur.v {
		if cur.v[i] < prev.v[i] {
			return CountersReset
		}
	}
	state := CountersOK
	r.Increments = map[string]uint64{}
	r.SinceSeconds = cur.at.Sub(prev.at).Seconds()
	for i, n := range CounterNames {
		r.inc[i] = cur.v[i] - prev.v[i]
		if _, ok := r.Values[n]; ok {
			r.Increments[n] = r.inc[i]
		}
		if cur.sat[i] {
			state = CountersSaturated
		}
	}
	return state
}

// pma reads (once per node, for the tracer's SupportTTL) what the node's
// PMA supports.
func (h *Checker) pma(p *trace.Probe, e *LinkEnd) (pmaCaps, error) {
	if c, ok := h.pmaCaps.Get(e.NodeGUID); ok {
		return c, nil
	}
	var cpi ibmad.ClassPortInfo
	if err := h.pmaGet(p, e, ibmad.AttrClassPortInfo, &cpi); err != nil {
		return pmaCaps{}, err
	}
	ew := cpi.CapabilityMask&(ibmad.CPICapPMExtWidth|ibmad.CPICapPMExtNoIETF) != 0
	c := pmaCaps{
		extWidth: ew,
		ietf:     cpi.CapabilityMask&ibmad.CPICapPMExtWidth != 0,
		ext:      ew && cpi.CapabilityMask2&ibmad.CPICap2PMAddlPortCtrsExt != 0,
		xmitWait: cpi.CapabilityMask&ibmad.CPICapPMXmitWait != 0,
		rsfec:    cpi.CapabilityMask&ibmad.CPICapPMRSFEC != 0,
	}
	h.pmaCaps.Put(e.NodeGUID, c)
	return c, nil
}

type unmarshaler interface{ UnmarshalBinary([]byte) error }

// pmaGet sends a PerfMgt Get of attr for e's port to e's LID, on the SL
// of p's path (trace.Probe.GMPAddress: the SL its trace used, no GRH). An
// answer for another attribute, or (PortSelect) another port, is an error
// (ErrMisanswer), never decoded as the one asked.
func (h *Checker) pmaGet(p *trace.Probe, e *LinkEnd, attr ibmad.AttrID, out unmarshaler) error {
	g := ibmad.NewPerfMgtGet(attr)
	if attr != ibmad.AttrClassPortInfo {
		g.Data[1] = e.Port
	}
	req := &ibmad.Request{Addr: p.GMPAddress(e.LID)}
	if err := g.MarshalTo(req.MAD[:]); err != nil {
		return err
	}
	name := ibmad.AttrName(ibmad.ClassPerfMgt, attr)
	resp, err := p.Do(req)
	if err != nil {
		return fmt.Errorf("PerfMgt %s of LID %d port %d: no answer on SL %d: %w", name, e.LID, e.Port, req.Addr.SL, err)
	}
	if err := checkAttr(&resp.MAD, attr); err != nil { // answer.go
		return fmt.Errorf("PerfMgt %s of LID %d port %d: %w", name, e.LID, e.Port, err)
	}
	if st := resp.MAD.Status(); st != 0 {
		return fmt.Errorf("PerfMgt %s of LID %d port %d: the PMA answered %w", name, e.LID, e.Port, st.Err())
	}
	if err := checkPort(&resp.MAD, attr, e.Port, e.NodeType); err != nil {
		return fmt.Errorf("PerfMgt %s of LID %d port %d: %w", name, e.LID, e.Port, err)
	}
	return out.UnmarshalBinary(resp.MAD.PerfMgtData())
}

// judgeCounters sums a link's error increments and checks the limits.
func (h *Checker) judgeCounters(l *Link) {
	known := true
	for _, end := range []struct {
		name string
		e    *LinkEnd
	}{{"a", &l.A}, {"b", &l.B}} {
		r := end.e.Counters
		if r == nil {
			known = false
			continue
		}
		switch r.State {
		case CountersOK, CountersSaturated:
			for i := range r.inc {
				if i == xmitWait {
					l.XmitWait += r.inc[i]
				} else {
					l.Errors += r.inc[i]
				}
				if lim, ok := h.opts.Limits[CounterNames[i]]; ok && r.inc[i] > lim {
					l.OverLimit = append(l.OverLimit, end.name+":"+CounterNames[i])
				}
			}
		case CountersFirst:
			known = false
			if h.opts.LimitValues {
				for n, v := range r.Values {
					if lim, ok := h.opts.Limits[n]; ok && v > lim {
						l.OverLimit = append(l.OverLimit, end.name+":"+n)
					}
				}
				sort.Strings(l.OverLimit)
			}
		default:
			known = false
		}
	}
	l.ErrorsKnown = known
}
