package sim

import (
	"context"
	"math/rand/v2"
	"sort"
	"sync/atomic"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// ChaosOptions configure Fabric.Chaos.
type ChaosOptions struct {
	// Rand draws the faults and their times; default seeded from the clock.
	Rand *rand.Rand
	// Log, if set, is told about every fault and repair (msg, then
	// key/value pairs).
	Log func(msg string, keyvals ...any)
	// Wait waits d and returns true, or returns false as soon as ctx ends.
	// Default: a timer. Tests inject one that returns at once.
	Wait func(ctx context.Context, d time.Duration) bool
	// Source is the node the tracer runs on (default: the first CA, as
	// --sim.node). Faults are placed on its routes, where its traces and
	// their validation MADs see them.
	Source string
}

// Chaos intervals: the first fault within 20 s, then one every 20-40 s,
// so that a demonstration shows every verdict in its first minutes; each
// in force for 3.5 minutes (the ingress one, which no alert watches, for
// one), longer than the for: of the shipped alert it raises (2 minutes)
// plus a scrape, an evaluation and a trace interval, so that make run and
// make demo-alerts show the alerts fire and resolve
// (TestChaosFaultsOutlastTheRules). Faults overlap.
const (
	chaosFirst       = 10 * time.Second
	chaosMinGap      = 20 * time.Second
	chaosGapSpread   = 20 // seconds
	chaosLossy       = 210 * time.Second
	chaosLinkDown    = 210 * time.Second
	chaosDivergence  = 210 * time.Second
	chaosIngressHide = 60 * time.Second
	chaosAgentMute   = 210 * time.Second
	chaosDropRate    = 0.3
	chaosTargetTries = 4 // targets a kind of fault tries before the next kind
)

// The kinds of fault, injected in this order, round and round, so that a
// demonstration shows every agent verdict in its first minutes.
const (
	faultDivergence  = iota // the data plane leaves the LFT: status 7, mismatch
	faultLinkDown           // a link down and re-routed: a path change
	faultIngressHide        // an agent or SMA cannot tell the ingress: ingress_unknown
	faultAgentMute          // an agent stops answering (overloaded): lost
	faultLossy              // a lossy link: lost validation MADs, timeouts
	faultKinds
)

type repair struct {
	at  time.Duration
	msg string
	kv  []any
	fn  func()
}

// chaos is one run of Fabric.Chaos: the faults it puts in on the source
// node's routes, one kind after the other, and their repairs.
type chaos struct {
	f        *Fabric
	o        ChaosOptions
	src      *Node   // the node the tracer runs on
	switches []*Node // the targets: every switch but the source's own
	now      time.Duration
	pending  []repair // by due time
	kind     int      // of the next fault
}

// newChaos prepares a run of Chaos with o, or returns nil when the fabric
// has no source node or no switch to break.
func newChaos(f *Fabric, o ChaosOptions) *chaos {
	if o.Rand == nil {
		o.Rand = rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	if o.Wait == nil {
		o.Wait = waitTimer
	}
	src := chaosSource(f, o.Source)
	var switches []*Node
	for _, n := range f.Nodes() {
		if n.IsSwitch() && n != src && !(src != nil && !src.IsSwitch() && attachedTo(src, n)) {
			switches = append(switches, n)
		}
	}
	if src == nil || len(switches) == 0 {
		return nil
	}
	return &chaos{f: f, o: o, src: src, switches: switches}
}

// run injects faults and repairs them on one schedule until ctx ends,
// then repairs what is still broken.
func (c *chaos) run(ctx context.Context) {
	o := c.o
	defer c.standingFaults(time.Now)()
	rng := o.Rand
	nextFault := chaosFirst + time.Duration(rng.IntN(chaosGapSpread/2))*time.Second
	defer func() {
		for _, r := range c.pending {
			r.fn()
			o.Log("sim fault repaired at shutdown: "+r.msg, r.kv...)
		}
	}()
	for {
		next := nextFault
		if len(c.pending) > 0 && c.pending[0].at < next {
			next = c.pending[0].at
		}
		if !o.Wait(ctx, next-c.now) {
			return
		}
		c.now = next
		for len(c.pending) > 0 && c.pending[0].at <= c.now {
			r := c.pending[0]
			c.pending = c.pending[1:]
			r.fn()
			o.Log("sim fault repaired: "+r.msg, r.kv...)
		}
		if c.now < nextFault {
			continue
		}
		nextFault = c.now + chaosMinGap + time.Duration(rng.IntN(chaosGapSpread))*time.Second
		c.injectNext()
	}
}

// injectNext puts in one fault, of the next kind that finds something to
// break: a kind that finds nothing on a few targets (no parallel link up,
// a target already broken) gives way to the next one.
func (c *chaos) injectNext() {
	for tries := 0; tries < chaosTargetTries*faultKinds; tries++ {
		r, ok := c.inject(c.kind)
		if ok || tries%chaosTargetTries == chaosTargetTries-1 {
			c.kind = (c.kind + 1) % faultKinds
		}
		if ok {
			r.at += c.now
			c.pending = append(c.pending, r)
			sort.SliceStable(c.pending, func(i, j int) bool { return c.pending[i].at < c.pending[j].at })
			return
		}
	}
}

// chaosSource returns the named node, or the first CA.
func chaosSource(f *Fabric, name string) *Node {
	if name != "" {
		return f.byName[name]
	}
	for _, n := range f.Nodes() {
		if n.Type == ibmad.NodeTypeCA {
			return n
		}
	}
	return nil
}

// attachedTo says whether CA src is cabled to switch sw.
func attachedTo(src, sw *Node) bool {
	for _, p := range src.Ports[1:] {
		if p.Remote != nil && p.Remote.Node == sw {
			return true
		}
	}
	return false
}

// link is one step of a route: out of From by Out, into To by In.
type link struct {
	From *Node
	Out  uint8
	To   *Node
	In   uint8
}

// route follows the programmed forwarding tables (what SMPs read, not
// the data plane) from the source to the node that owns lid.
func (c *chaos) route(lid uint16) []link {
	f, src := c.f, c.src
	f.mu.RLock()
	defer f.mu.RUnlock()
	var out []link
	cur := src
	if !src.IsSwitch() {
		p := src.Ports[1]
		for _, q := range src.Ports[1:] {
			if q.Remote != nil {
				p = q
				break
			}
		}
		if p.Remote == nil {
			return nil
		}
		out = append(out, link{src, p.Num, p.Remote.Node, p.Remote.Num})
		cur = p.Remote.Node
	}
	for len(out) < ibmad.MaxTraceHops && cur.IsSwitch() && cur.Ports[0].LID != lid {
		if int(lid) >= len(cur.lft) {
			return nil
		}
		port := cur.lft[lid]
		if int(port) >= len(cur.Ports) || port == 0 || cur.Ports[port].Remote == nil {
			return nil
		}
		r := cur.Ports[port].Remote
		out = append(out, link{cur, port, r.Node, r.Num})
		cur = r.Node
	}
	if !cur.IsSwitch() || cur.Ports[0].LID != lid {
		return nil
	}
	return out
}

// switchFault puts in force the fault that flag of switch target stands
// for, unless it already is, and logs logMsg; its repair, due after at
// and named msg, lifts it.
func switchFault(flag *atomic.Bool, target *Node, at time.Duration, logMsg, msg string, log func(string, ...any)) (repair, bool) {
	if flag.Load() {
		return repair{}, false
	}
	kv := []any{"switch", target.Name}
	flag.Store(true)
	log(logMsg, kv...)
	return repair{at: at, msg: msg, kv: kv, fn: func() { flag.Store(false) }}, true
}

// ingressHide makes target unable to tell the ingress port of what it is
// asked: its agents answer port 0, and its SMA answers LID-routed SMPs
// with LocalPortNum 0, as ibsim's switches do (sma.go), so that
// the fault shows as ingress_unknown whoever validates the switch (on a
// real fabric, its SMA). The repair restores both.
func ingressHide(target *Node, log func(string, ...any)) (repair, bool) {
	r, ok := switchFault(&target.hideIn, target, chaosIngressHide, "sim fault: agent and SMA cannot tell the ingress port",
		"ingress hidden", log)
	if !ok {
		return r, false
	}
	was := target.localPort.Swap(localPortZero)
	hide := r.fn
	r.fn = func() { hide(); target.localPort.Store(was) }
	return r, true
}

// inject applies one fault of the kind on the source's route to a
// random switch and returns its repair, with the delay after which it is
// due.
func (c *chaos) inject(kind int) (repair, bool) {
	f, rng, log := c.f, c.o.Rand, c.o.Log
	target := c.switches[rng.IntN(len(c.switches))]
	lid := target.Ports[0].LID
	rt := c.route(lid)
	if len(rt) < 2 { // the source's own link, then at least one between switches
		return repair{}, false
	}
	switch kind {
	case faultDivergence:
		// The last switch before the target sends the target's LID out of
		// another cable to it: the validation MAD to the target's own LID
		// arrives by another port than the forwarding tables say.
		last := rt[len(rt)-1]
		var alt []uint8
		for _, p := range last.From.Ports[1:] {
			if p.Num != last.Out && p.Remote != nil && p.Remote.Node == target && p.State == ibmad.PortStateActive {
				alt = append(alt, p.Num)
			}
		}
		if len(alt) == 0 {
			return repair{}, false
		}
		port := alt[rng.IntN(len(alt))]
		sw := last.From.Name
		kv := []any{"switch", sw, "lid", lid, "port", port, "lft_port", last.Out, "seen_at", target.Name}
		if err := f.SetForwardOverride(sw, lid, port); err != nil {
			return repair{}, false
		}
		log("sim fault: data plane diverges from the LFT", kv...)
		return repair{at: chaosDivergence, msg: "data plane divergence", kv: kv, fn: func() { f.ClearForwardOverrides(sw) }}, true
	case faultLinkDown:
		l := rt[1]
		kv := []any{"switch", l.From.Name, "port", l.Out}
		if err := f.SetLinkState(l.From.Name, int(l.Out), false, true); err != nil {
			return repair{}, false
		}
		log("sim fault: link down, re-routed", kv...)
		return repair{at: chaosLinkDown, msg: "link down", kv: kv, fn: func() { _ = f.SetLinkState(l.From.Name, int(l.Out), true, true) }}, true
	case faultIngressHide:
		return ingressHide(target, log)
	case faultAgentMute:
		return switchFault(&target.muteAgents, target, chaosAgentMute, "sim fault: agent stops answering", "agent mute", log)
	default: // faultLossy
		// The first link between switches on the route: the trace's SMPs
		// and the validation MADs beyond it cross it.
		l := rt[1]
		kv := []any{"switch", l.From.Name, "port", l.Out}
		if err := f.SetDropRate(l.From.Name, int(l.Out), chaosDropRate); err != nil {
			return repair{}, false
		}
		log("sim fault: lossy link", kv...)
		return repair{at: chaosLossy, msg: "lossy link", kv: kv, fn: func() { _ = f.SetDropRate(l.From.Name, int(l.Out), 0) }}, true
	}
}

func waitTimer(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// healthErrorRate is the rate at which the demo's error fault makes a
// port's symbol and receive errors climb.
const healthErrorRate = 2.0 // per second

// standingFaults applies, for Chaos, the standing path-health faults the
// demo shows (docs/runbook.md, "Path health"): on the switch of the
// source node (the source itself if it is a switch), its first
// inter-switch link trains at 1X and its last at SDR, and the port of
// another CA on it counts errors at healthErrorRate. They stay for the
// whole run, apart from the random schedule, and are logged as "sim
// health fault"; the returned function repairs them.
func (c *chaos) standingFaults(now func() time.Time) func() {
	f, src, log := c.f, c.src, c.o.Log
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
