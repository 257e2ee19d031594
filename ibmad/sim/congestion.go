package sim

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// waitClimb makes a port's PortXmitWait, and one VL's PortVLXmitWait,
// climb at a set rate of ticks a second, read off a clock when the PMA is
// asked: a congested egress port.
type waitClimb struct {
	errorClimb // the rate, and count (health_faults.go)
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

// bank adds what the climb under way counted so far to the port's totals.
func (c *congestion) bank() {
	if w := c.climb.Load(); w != nil {
		n := w.count()
		c.wait.Add(n)
		c.vlWait[w.vl].Add(n)
	}
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

// SetXmitWaitRate makes port of node congested: its PortXmitWait, and
// VL0's PortVLXmitWait, climb by ticksPerSecond on clock now (nil:
// time.Now); 0 stops the climb (the counters keep what they reached).
func (f *Fabric) SetXmitWaitRate(name string, port int, ticksPerSecond float64, now func() time.Time) error {
	return f.SetVLXmitWaitRate(name, port, 0, ticksPerSecond, now)
}

// SetVLXmitWaitRate is SetXmitWaitRate with the waits on VL vl (0-15).
func (f *Fabric) SetVLXmitWaitRate(name string, port, vl int, ticksPerSecond float64, now func() time.Time) error {
	p, err := f.port(name, port)
	if err != nil {
		return err
	}
	if ticksPerSecond < 0 {
		return fmt.Errorf("sim: transmit wait rate %g is negative", ticksPerSecond)
	}
	if vl < 0 || vl >= ibmad.NumVLs {
		return fmt.Errorf("sim: VL %d is not 0-%d", vl, ibmad.NumVLs-1)
	}
	if now == nil {
		now = time.Now
	}
	c := &p.ctr.cong
	c.bank()
	if ticksPerSecond == 0 {
		c.climb.Store(nil)
		return nil
	}
	c.climb.Store(&waitClimb{errorClimb: errorClimb{perSecond: ticksPerSecond, since: now(), now: now}, vl: vl})
	return nil
}

// SetPMANoVLXmitWait makes node's PMA answer PortVLXmitWaitCounters with
// an unsupported-attribute status, as a PMA without the optional
// attribute does (false: answer it again).
func (f *Fabric) SetPMANoVLXmitWait(name string, off bool) error {
	return f.setPMAFault(name, func(p *pmaFault) { p.noVLWait = off })
}

// pmaVLXmitWait answers a PortVLXmitWaitCounters Get (or Set, which
// clears the waits) for ports; it reports whether it answered.
func (n *Node) pmaVLXmitWait(m *ibmad.MAD, ports []*Port, set bool) bool {
	if p := n.pma.Load(); p != nil && p.noVLWait {
		m.SetStatus(ibmad.StatusMethodAttrUnsupp)
		return false
	}
	data := m.PerfMgtData()
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
	return true
}
