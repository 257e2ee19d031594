package sim

import (
	"context"
	"fmt"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// The faults a test or the demo puts in a running fabric, and Chaos,
// which puts them in on a schedule. Each says what it breaks and how to
// repair it; the state each changes belongs to the part it breaks (a
// port, a node's SMA or PMA, the SA, the data plane).

// SetDropRate makes the link leaving port of node drop a fraction rate
// (0..1) of the MADs it carries, counted as receive and symbol errors at
// the far end.
func (f *Fabric) SetDropRate(name string, port int, rate float64) error {
	p, err := f.port(name, port)
	if err != nil {
		return err
	}
	if rate < 0 || rate > 1 {
		return fmt.Errorf("sim: drop rate %g outside 0..1", rate)
	}
	p.dropPPM.Store(uint32(rate * 1_000_000))
	return nil
}

// SetLinkState takes the link at port of node down or brings it back up
// (both ends). With reroute, the forwarding tables are recomputed
// afterwards, as an SM sweep would; without, they keep pointing at the
// dead link and MADs routed over it are discarded.
func (f *Fabric) SetLinkState(name string, port int, up, reroute bool) error {
	p, err := f.port(name, port)
	if err != nil {
		return err
	}
	if p.Remote == nil {
		return fmt.Errorf("sim: %s[%d] is not cabled", name, port)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, q := range []*Port{p, p.Remote} {
		if up {
			q.State, q.Phys = ibmad.PortStateActive, ibmad.PhysStateLinkUp
		} else {
			if q.Phys == ibmad.PhysStateLinkUp {
				q.ctr.linkDowned.Add(1)
			}
			q.State, q.Phys = ibmad.PortStateDown, ibmad.PhysStatePolling
		}
	}
	if reroute {
		f.rebuildLIDTable()
		f.computeRoutes()
	}
	return nil
}

// SetForwardOverride makes switch name's data plane send lid out of port,
// while its LFT (what SMPs read) keeps the programmed entry: the fault the
// ibtracer agent exists to catch ("status 7").
func (f *Fabric) SetForwardOverride(name string, lid uint16, port uint8) error {
	n, err := f.switchEgress(name, port)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if n.override == nil {
		n.override = map[uint16]uint8{}
	}
	n.override[lid] = port
	return nil
}

// ClearForwardOverrides removes every data-plane override of switch name.
func (f *Fabric) ClearForwardOverrides(name string) {
	if n := f.byName[name]; n != nil {
		f.mu.Lock()
		n.override = nil
		f.mu.Unlock()
	}
}

// SetPortLID gives port of node a new base LID, which may duplicate
// another port's. Forwarding tables are not touched until Reroute.
func (f *Fabric) SetPortLID(name string, port int, lid uint16) error {
	p, err := f.port(name, port)
	if err != nil {
		return err
	}
	if lid == 0 || lid >= 0xC000 {
		return fmt.Errorf("sim: LID %d is not a unicast LID", lid)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	p.LID = lid
	f.rebuildLIDTable()
	// Keep the LFTs as long as the new LID table so lookups stay in range.
	for _, sw := range f.switches {
		for len(sw.lft) < len(f.lids) {
			sw.lft = append(sw.lft, ibmad.LFTNoRoute)
		}
	}
	return nil
}

// SetSilent makes node answer nothing at all (SMA, PMA, agents), as a
// hung or powered-off node would; false restores it.
func (f *Fabric) SetSilent(name string, silent bool) error {
	n := f.byName[name]
	if n == nil {
		return fmt.Errorf("sim: no node %q", name)
	}
	n.silent.Store(silent)
	return nil
}

// SetAgentsMute makes the agents registered at node name (and the kernel
// for them) answer nothing, its SMA and PMA still answering, as the
// chaos fault "agent mute" does; false restores them.
func (f *Fabric) SetAgentsMute(name string, mute bool) error {
	n := f.byName[name]
	if n == nil {
		return fmt.Errorf("sim: no node %q", name)
	}
	n.muteAgents.Store(mute)
	return nil
}

// SetLFTEntry programs switch name's forwarding table entry for lid, as a
// (buggy) SM would: SMPs read it and the data plane follows it. Used to
// build routing loops and dead ends.
func (f *Fabric) SetLFTEntry(name string, lid uint16, port uint8) error {
	n, err := f.switchEgress(name, port)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if int(lid) >= len(n.lft) {
		return fmt.Errorf("sim: LID %d is above the table top %d", lid, len(n.lft)-1)
	}
	n.lft[lid] = port
	return nil
}

// SetSwitchLocalPortZero makes switch name's SMA answer LocalPortNum 0 to
// LID-routed SMPs, as ibsim's do (zero), or the port they arrived on, as
// real switches do (!zero), whatever Options.SwitchLocalPortZero says for
// the rest of the fabric.
func (f *Fabric) SetSwitchLocalPortZero(name string, zero bool) error {
	n := f.byName[name]
	if n == nil || !n.IsSwitch() {
		return fmt.Errorf("sim: %q is not a switch", name)
	}
	if zero {
		n.localPort.Store(localPortZero)
	} else {
		n.localPort.Store(localPortReal)
	}
	return nil
}

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
	p.ctr.setErrorRate(perSecond, now)
	return nil
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
	p.ctr.cong.setRate(vl, ticksPerSecond, now)
	return nil
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

// SetPMANoVLXmitWait makes node's PMA answer PortVLXmitWaitCounters with
// an unsupported-attribute status, as a PMA without the optional
// attribute does (false: answer it again).
func (f *Fabric) SetPMANoVLXmitWait(name string, off bool) error {
	return f.setPMAFault(name, func(p *pmaFault) { p.noVLWait = off })
}

// AddPortErrors adds e to the counters of node name's port.
func (f *Fabric) AddPortErrors(name string, port int, e PortErrors) error {
	p, err := f.port(name, port)
	if err != nil {
		return err
	}
	c := &p.ctr
	c.symbolErrors.Add(e.SymbolErrors)
	c.rcvErrors.Add(e.RcvErrors)
	c.xmitDiscards.Add(e.XmitDiscards)
	c.linkDowned.Add(e.LinkDowned)
	for i, v := range e.RcvErrorDetails {
		c.details.rcv[i].Add(v)
	}
	for i, v := range e.XmitDiscardDetails {
		c.details.xmit[i].Add(v)
	}
	c.details.fecCorr.Add(e.FECCorrected)
	c.details.fecUncorr.Add(e.FECUncorrectable)
	return nil
}

// SetPMACapabilityMask2 makes node name's PMA advertise mask as its
// ClassPortInfo CapabilityMask2 (nil: the default, which sets bit 1, the
// 64-bit error counters of PortCountersExtended). ibsim sets none: with
// mask 0 the PMA answers PortCountersExtended with the data counters
// only, as ibsim does.
func (f *Fabric) SetPMACapabilityMask2(name string, mask *uint32) error {
	return f.setPMAFault(name, func(p *pmaFault) { p.capMask2 = mask })
}

// SetPMAExtendedSpeeds sets how node name's PMA answers
// PortExtendedSpeedsCounters: rsfec advertises RS-FEC counters
// (ClassPortInfo CapabilityMask bit 14) and answers in the RS-FEC layout;
// off answers with an unsupported-attribute status, as a PMA without the
// attribute does.
func (f *Fabric) SetPMAExtendedSpeeds(name string, rsfec, off bool) error {
	return f.setPMAFault(name, func(p *pmaFault) { p.rsfec, p.noExtSpeeds = rsfec, off })
}

// SetPMANoIETF makes node name's PMA advertise PortCountersExtended
// without its unicast and multicast counters (ClassPortInfo
// CapabilityMask bit 10, not bit 9), and answer them as 0.
func (f *Fabric) SetPMANoIETF(name string, on bool) error {
	return f.setPMAFault(name, func(p *pmaFault) { p.noIETF = on })
}

// SetPMAMisanswer makes node's PMA answer as m says (nil: as asked).
func (f *Fabric) SetPMAMisanswer(name string, m *PMAMisanswer) error {
	if n := f.byName[name]; n != nil && m != nil {
		for _, p := range m.Ports {
			if int(p) > n.NumPorts() {
				return fmt.Errorf("sim: %s has no port %d", name, p)
			}
		}
	}
	return f.setPMAFault(name, func(p *pmaFault) { p.misanswer = m })
}

func (f *Fabric) setPMAFault(name string, set func(*pmaFault)) error {
	n := f.byName[name]
	if n == nil {
		return fmt.Errorf("sim: no node %q", name)
	}
	n.pma.setFault(set)
	return nil
}

// SetSARefusal sets what the SA refuses from now on (the zero value:
// nothing).
func (f *Fabric) SetSARefusal(r SARefusal) { f.sa.refusal.Store(&r) }

// SetSMPFirewall turns on (or off) the fault of a fabric where an
// ordinary node's HCA refuses to send any SMP: every SMP request
// (directed-route or LID-routed) from any node but the SM node is dropped.
func (f *Fabric) SetSMPFirewall(on bool) { f.setSMPMode(on, smpFirewall) }

// SetSMPMKeyProtect turns on (or off) the fault of a fabric whose nodes
// are M_Key protected against everyone but the SM: a node's SMPs to
// itself (a directed route of no hops) are answered, every other SMP
// from a node but the SM node is dropped.
func (f *Fabric) SetSMPMKeyProtect(on bool) { f.setSMPMode(on, smpMKeyProtect) }

func (f *Fabric) setSMPMode(on bool, mode int32) {
	if on {
		f.smpMode.Store(mode)
	} else {
		f.smpMode.Store(smpOpen)
	}
}

// SetSLUnusable makes the switches drop every LID-routed GMP sent on sl
// (as a switch whose SL-to-VL table maps sl to VL15 discards it), or
// carry it again. SMPs travel on VL15 whatever their SL and are never
// dropped for it.
func (f *Fabric) SetSLUnusable(sl uint8, unusable bool) {
	f.drops.mu.Lock()
	f.drops.unusable[sl&0xf] = unusable
	f.drops.mu.Unlock()
}

// QoSDrops counts the MADs dropped for an unusable SL or for a GRH whose
// DGID is not the receiving port's GID.
func (f *Fabric) QoSDrops() uint64 {
	f.drops.mu.RLock()
	defer f.drops.mu.RUnlock()
	return f.drops.dropped
}

// Chaos breaks the fabric now and then until ctx ends, for demonstrations
// (the exporter's --sim.faults), on the routes of the source node: a
// switch whose data plane diverges from its forwarding table for another
// switch's LID, so that the validation MAD to that switch arrives by
// another port than the tables say (docs/protocol.md, "The expected
// ingress ports"); a lossy link; a switch whose agent cannot tell the
// ingress port; a switch whose agent stops answering (as an overloaded
// or rate-limited one); a link that goes down (and is re-routed around, as an SM
// sweep would). Besides, it puts in standing path-health faults for the
// whole run (chaos.go). Every fault is repaired after a while; when ctx
// ends, Chaos repairs what is still broken and returns. Faults and
// repairs run on the caller's goroutine, on one schedule: nothing sleeps
// elsewhere.
func (f *Fabric) Chaos(ctx context.Context, o ChaosOptions) {
	if c := newChaos(f, o); c != nil {
		c.run(ctx)
	}
}
