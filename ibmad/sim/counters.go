package sim

import (
	"sync/atomic"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// portCounters is what a port's PMA counts: the packets and data that
// cross its link (forward.go moves them), its errors, and the faults that
// make errors and transmit waits climb.
type portCounters struct {
	xmitPkts, rcvPkts, xmitData, rcvData             atomic.Uint64
	xmitDiscards, rcvErrors, linkDowned, switchRelay atomic.Uint64
	symbolErrors                                     atomic.Uint64
	details                                          errorDetails               // pmerrors.go
	climb                                            atomic.Pointer[errorClimb] // fault: climbing errors
	cong                                             congestion                 // fault: transmit waits
}

// counterSums is the counters of one or more ports, summed.
type counterSums struct {
	xmitPkts, rcvPkts, xmitData, rcvData, xmitDiscards, rcvErrors, linkDowned, switchRelay, symbolErrors uint64
	xmitWait                                                                                             uint64
	details                                                                                              detailSums // pmerrors.go
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
	s.details.add(&c.details)
}

// reset clears the counters (a PerfMgt Set) and restarts the climbs from
// zero.
func (c *portCounters) reset() {
	for _, a := range []*atomic.Uint64{&c.xmitPkts, &c.rcvPkts, &c.xmitData, &c.rcvData, &c.xmitDiscards,
		&c.rcvErrors, &c.linkDowned, &c.switchRelay, &c.symbolErrors} {
		a.Store(0)
	}
	if e := c.climb.Load(); e != nil {
		c.climb.Store(&errorClimb{perSecond: e.perSecond, since: e.now(), now: e.now})
	}
	c.cong.reset()
	c.details.reset()
}

// climbed is the errors a climbing fault added so far.
func (c *portCounters) climbed() uint64 {
	if e := c.climb.Load(); e != nil {
		return e.count()
	}
	return 0
}

// setErrorRate makes the symbol and receive errors climb by perSecond
// (not negative) on clock now; 0 stops the climb, the counters keeping
// what they reached.
func (c *portCounters) setErrorRate(perSecond float64, now func() time.Time) {
	if old := c.climb.Load(); old != nil {
		n := old.count()
		c.symbolErrors.Add(n)
		c.rcvErrors.Add(n)
	}
	if perSecond == 0 {
		c.climb.Store(nil)
		return
	}
	c.climb.Store(&errorClimb{perSecond: perSecond, since: now(), now: now})
}

// errorClimb makes a port's SymbolErrorCounter and PortRcvErrors climb
// at a set rate, read off a clock when the PMA is asked (and, inside a
// waitClimb, its transmit waits).
type errorClimb struct {
	perSecond float64
	since     time.Time
	now       func() time.Time
}

func (c *errorClimb) count() uint64 {
	d := c.now().Sub(c.since)
	if d <= 0 {
		return 0
	}
	return uint64(d.Seconds() * c.perSecond)
}

// waitClimb makes a port's PortXmitWait, and one VL's PortVLXmitWait,
// climb at a set rate of ticks a second, read off a clock when the PMA is
// asked: a congested egress port.
type waitClimb struct {
	errorClimb // the rate, and count
	vl         int
}

// congestion is a port's transmit waits: what earlier climbs left
// (banked when a climb changes or stops) and the climb under way.
type congestion struct {
	wait   atomic.Uint64
	vlWait [ibmad.NumVLs]atomic.Uint64
	climb  atomic.Pointer[waitClimb]
}

// xmitWait is the port's PortXmitWait (unsaturated).
func (c *congestion) xmitWait() uint64 {
	n := c.wait.Load()
	if w := c.climb.Load(); w != nil {
		n += w.count()
	}
	return n
}

// vlXmitWait is VL vl's PortVLXmitWait (unsaturated).
func (c *congestion) vlXmitWait(vl int) uint64 {
	n := c.vlWait[vl].Load()
	if w := c.climb.Load(); w != nil && w.vl == vl {
		n += w.count()
	}
	return n
}

// setRate makes the waits on VL vl climb by ticksPerSecond (not
// negative) on clock now, after banking what the climb under way counted;
// 0 stops the climb.
func (c *congestion) setRate(vl int, ticksPerSecond float64, now func() time.Time) {
	if w := c.climb.Load(); w != nil {
		n := w.count()
		c.wait.Add(n)
		c.vlWait[w.vl].Add(n)
	}
	if ticksPerSecond == 0 {
		c.climb.Store(nil)
		return
	}
	c.climb.Store(&waitClimb{errorClimb: errorClimb{perSecond: ticksPerSecond, since: now(), now: now}, vl: vl})
}

// reset clears the waits (a PerfMgt Set) and restarts a climb from zero.
func (c *congestion) reset() {
	c.wait.Store(0)
	for i := range c.vlWait {
		c.vlWait[i].Store(0)
	}
	if w := c.climb.Load(); w != nil {
		c.climb.Store(&waitClimb{errorClimb: errorClimb{perSecond: w.perSecond, since: w.now(), now: w.now}, vl: w.vl})
	}
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
