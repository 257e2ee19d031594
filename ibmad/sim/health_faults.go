package sim

import (
	"fmt"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// LinkTraining is what a link trained at, overriding the simulated SMA's
// default (4X QDR, supporting 1X/4X and SDR/DDR/QDR): the faults of a link
// trained below its capability.
type LinkTraining struct {
	WidthActive, WidthSupported uint8 // PortInfo width bits (1 = 1X, 2 = 4X, 8 = 12X)
	SpeedActive, SpeedSupported uint8 // PortInfo legacy speed bits (1 SDR, 2 DDR, 4 QDR)
	// ExtActive and ExtSupported are the extended speed bits (1 FDR, 2
	// EDR, 4 HDR, 8 NDR); 0: none.
	ExtActive, ExtSupported uint8
}

// defaultTraining is the simulated SMA's link.
var defaultTraining = LinkTraining{WidthActive: 2, WidthSupported: 3, SpeedActive: 4, SpeedSupported: 7}

// SetLinkTraining makes the link at port of node (both ends) report tr;
// nil restores the default.
func (f *Fabric) SetLinkTraining(name string, port int, tr *LinkTraining) error {
	p, err := f.port(name, port)
	if err != nil {
		return err
	}
	if p.Remote == nil {
		return fmt.Errorf("sim: %s[%d] is not cabled", name, port)
	}
	p.training.Store(tr)
	p.Remote.training.Store(tr)
	return nil
}

// SetLinkWidth makes the link at port of node train at 1X although both
// ends support 4X (iblinkinfo: "Could be 4X"); false restores it.
func (f *Fabric) SetLinkWidth(name string, port int, degraded bool) error {
	return f.degradeLink(name, port, degraded, func(tr *LinkTraining) { tr.WidthActive = 1 })
}

// SetLinkSpeed makes the link at port of node run at SDR although both
// ends support QDR; false restores it.
func (f *Fabric) SetLinkSpeed(name string, port int, degraded bool) error {
	return f.degradeLink(name, port, degraded, func(tr *LinkTraining) { tr.SpeedActive = 1 })
}

// degradeLink trains the link at port of node as the default training
// changed by degrade; not degraded, it restores the link.
func (f *Fabric) degradeLink(name string, port int, degraded bool, degrade func(*LinkTraining)) error {
	if !degraded {
		return f.SetLinkTraining(name, port, nil)
	}
	tr := defaultTraining
	degrade(&tr)
	return f.SetLinkTraining(name, port, &tr)
}

// applyTraining overrides pi's width and speed with the port's training.
func (p *Port) applyTraining(pi *ibmad.PortInfo) {
	tr := p.training.Load()
	if tr == nil || pi.PortState != ibmad.PortStateActive {
		return
	}
	pi.LinkWidthActive, pi.LinkWidthSupported, pi.LinkWidthEnabled = tr.WidthActive, tr.WidthSupported, tr.WidthSupported
	pi.LinkSpeedActive, pi.LinkSpeedSupported, pi.LinkSpeedEnabled = tr.SpeedActive, tr.SpeedSupported, tr.SpeedSupported
	pi.LinkSpeedExtActive, pi.LinkSpeedExtSupported, pi.LinkSpeedExtEnabled = tr.ExtActive, tr.ExtSupported, tr.ExtSupported
	if tr.ExtActive != 0 {
		pi.LinkSpeedActive = 0 // "see the extended speed"
	}
}

// errorClimb makes a port's SymbolErrorCounter and PortRcvErrors climb
// at a set rate, read off a clock when the PMA is asked (and, inside a
// waitClimb, its transmit waits: congestion.go).
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

// climbed is the errors a climbing fault added so far.
func (c *portCounters) climbed() uint64 {
	if e := c.climb.Load(); e != nil {
		return e.count()
	}
	return 0
}

// SetErrorRate makes the symbol and receive errors of port of node climb
// by perSecond, on clock now (nil: time.Now); 0 stops the climb (the
// counters keep what they reached).
func (f *Fabric) SetErrorRate(name string, port int, perSecond float64, now func() time.Time) error {
	p, err := f.port(name, port)
	if err != nil {
		return err
	}
	if perSecond < 0 {
		return fmt.Errorf("sim: error rate %g is negative", perSecond)
	}
	if now == nil {
		now = time.Now
	}
	if old := p.ctr.climb.Load(); old != nil {
		n := old.count()
		p.ctr.symbolErrors.Add(n)
		p.ctr.rcvErrors.Add(n)
	}
	if perSecond == 0 {
		p.ctr.climb.Store(nil)
		return nil
	}
	p.ctr.climb.Store(&errorClimb{perSecond: perSecond, since: now(), now: now})
	return nil
}

// restartClimb restarts a climb from zero when the counters are cleared.
func (c *portCounters) restartClimb() {
	if e := c.climb.Load(); e != nil {
		c.climb.Store(&errorClimb{perSecond: e.perSecond, since: e.now(), now: e.now})
	}
}

// pmaFault changes what a node's PMA answers.
type pmaFault struct {
	status ibmad.Status // non-zero: every PerfMgt request gets this status
	legacy bool         // no PortCountersExtended: the saturating counters only
	// noVLWait: no PortVLXmitWaitCounters (congestion.go).
	noVLWait bool
	// misanswer: answers for another attribute or port (pma_misanswer.go).
	misanswer *PMAMisanswer
}

// SetPMAStatus makes node's PMA answer every request with status st (0:
// answer normally again).
func (f *Fabric) SetPMAStatus(name string, st ibmad.Status) error {
	return f.setPMAFault(name, func(p *pmaFault) { p.status = st })
}

// SetPMALegacy makes node's PMA advertise no PortCountersExtended, as
// older HCAs and ibsim do: only the 8-, 16- and 32-bit PortCounters,
// which saturate.
func (f *Fabric) SetPMALegacy(name string, legacy bool) error {
	return f.setPMAFault(name, func(p *pmaFault) { p.legacy = legacy })
}

func (f *Fabric) setPMAFault(name string, set func(*pmaFault)) error {
	n := f.byName[name]
	if n == nil {
		return fmt.Errorf("sim: no node %q", name)
	}
	p := pmaFault{}
	if old := n.pma.Load(); old != nil {
		p = *old
	}
	set(&p)
	n.pma.Store(&p)
	return nil
}

// pmaFaulted answers m per node's PMA fault and says whether it did; it
// adjusts cpi for a legacy PMA.
func (n *Node) pmaFaulted(m *ibmad.MAD) bool {
	if p := n.pma.Load(); p != nil && p.status != 0 {
		m.SetStatus(p.status)
		return true
	}
	return false
}

func (n *Node) pmaLegacy(cpi *ibmad.ClassPortInfo) {
	if p := n.pma.Load(); p != nil && p.legacy {
		cpi.CapabilityMask &^= ibmad.CPICapPMExtWidth | ibmad.CPICapPMExtNoIETF
		cpi.CapabilityMask2 = 0
	}
}
