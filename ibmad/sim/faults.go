package sim

import (
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

func (f *Fabric) port(name string, port int) (*Port, error) {
	n := f.byName[name]
	if n == nil {
		return nil, fmt.Errorf("sim: no node %q", name)
	}
	if port < 0 || port > n.NumPorts() || (port == 0 && !n.IsSwitch()) {
		return nil, fmt.Errorf("sim: node %q has no port %d", name, port)
	}
	return n.Ports[port], nil
}

// switchEgress checks that name is a switch and port one of its ports
// (or LFTNoRoute), as a forwarding entry needs.
func (f *Fabric) switchEgress(name string, port uint8) (*Node, error) {
	n := f.byName[name]
	if n == nil || !n.IsSwitch() {
		return nil, fmt.Errorf("sim: %q is not a switch", name)
	}
	if int(port) > n.NumPorts() && port != ibmad.LFTNoRoute {
		return nil, fmt.Errorf("sim: switch %q has no port %d", name, port)
	}
	return n, nil
}

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
