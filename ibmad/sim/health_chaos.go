package sim

import (
	"time"
)

// healthErrorRate is the rate at which the demo's error fault makes a
// port's symbol and receive errors climb.
const healthErrorRate = 2.0 // per second

// healthFaults applies, for Chaos, the standing path-health faults the
// demo shows (docs/runbook.md, "Path health"): on the switch of the
// source node (the source itself if it is a switch), its first
// inter-switch link trains at 1X and its last at SDR, and the port of
// another CA on it counts errors at healthErrorRate. They stay for the
// whole run, apart from the random schedule, and are logged as "sim
// health fault"; the returned function repairs them.
func (f *Fabric) healthFaults(src *Node, log func(string, ...any), now func() time.Time) func() {
	sw := src
	if src != nil && !src.IsSwitch() {
		sw = nil
		for _, p := range src.Ports[1:] {
			if p.Remote != nil && p.Remote.Node.IsSwitch() {
				sw = p.Remote.Node
				break
			}
		}
	}
	if sw == nil {
		return func() {}
	}
	first := src
	var up, hosts []int
	for _, p := range sw.Ports[1:] {
		switch {
		case p.Remote == nil:
		case p.Remote.Node.IsSwitch():
			up = append(up, int(p.Num))
		case p.Remote.Node != first:
			hosts = append(hosts, int(p.Num))
		}
	}
	var undo []func()
	if len(up) > 0 {
		if f.SetLinkWidth(sw.Name, up[0], true) == nil {
			log("sim health fault: link trained at 1X, could be 4X", "switch", sw.Name, "port", up[0])
			undo = append(undo, func() { _ = f.SetLinkWidth(sw.Name, up[0], false) })
		}
	}
	if len(up) > 1 {
		last := up[len(up)-1]
		if f.SetLinkSpeed(sw.Name, last, true) == nil {
			log("sim health fault: link at SDR, could be QDR", "switch", sw.Name, "port", last)
			undo = append(undo, func() { _ = f.SetLinkSpeed(sw.Name, last, false) })
		}
	}
	if len(hosts) > 0 {
		p := hosts[len(hosts)-1]
		if f.SetErrorRate(sw.Name, p, healthErrorRate, now) == nil {
			log("sim health fault: symbol and receive errors climbing", "switch", sw.Name, "port", p, "per_second", healthErrorRate)
			undo = append(undo, func() { _ = f.SetErrorRate(sw.Name, p, 0, now) })
		}
	}
	return func() {
		for _, u := range undo {
			u()
		}
		if len(undo) > 0 {
			log("sim health faults repaired")
		}
	}
}
