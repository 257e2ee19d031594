package sim

import (
	"context"
	"math/rand/v2"
	"sort"
	"time"
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
}

// Chaos intervals: a fault every 20-40 s, each in force for a while.
const (
	chaosMinGap     = 20 * time.Second
	chaosGapSpread  = 20 // seconds
	chaosLossy      = 30 * time.Second
	chaosLinkDown   = 40 * time.Second
	chaosDivergence = 60 * time.Second
	chaosDropRate   = 0.3
)

type repair struct {
	at  time.Duration
	msg string
	kv  []any
	fn  func()
}

// Chaos breaks the fabric now and then until ctx ends, for demonstrations
// (the exporter's --sim.faults): a lossy inter-switch link, a link that
// goes down (and is re-routed around, as an SM sweep would), or a switch
// whose data plane diverges from its forwarding table for another
// switch's LID. Every fault is repaired after a while; when ctx ends,
// Chaos repairs what is still broken and returns. Faults and repairs run
// on the caller's goroutine, on one schedule: nothing sleeps elsewhere.
func (f *Fabric) Chaos(ctx context.Context, o ChaosOptions) {
	if o.Rand == nil {
		o.Rand = rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	if o.Wait == nil {
		o.Wait = waitTimer
	}
	var switches []*Node
	for _, n := range f.Nodes() {
		if n.IsSwitch() {
			switches = append(switches, n)
		}
	}
	if len(switches) < 2 {
		return
	}
	defer f.healthFaults(o.Log, time.Now)() // standing path-health faults (health_chaos.go)
	rng := o.Rand
	var now time.Duration
	var pending []repair
	nextFault := chaosMinGap + time.Duration(rng.IntN(chaosGapSpread))*time.Second
	defer func() {
		for _, r := range pending {
			r.fn()
			o.Log("sim fault repaired at shutdown: "+r.msg, r.kv...)
		}
	}()
	for {
		next := nextFault
		if len(pending) > 0 && pending[0].at < next {
			next = pending[0].at
		}
		if !o.Wait(ctx, next-now) {
			return
		}
		now = next
		for len(pending) > 0 && pending[0].at <= now {
			r := pending[0]
			pending = pending[1:]
			r.fn()
			o.Log("sim fault repaired: "+r.msg, r.kv...)
		}
		if now < nextFault {
			continue
		}
		nextFault = now + chaosMinGap + time.Duration(rng.IntN(chaosGapSpread))*time.Second
		if r, ok := f.injectFault(rng, switches, o.Log); ok {
			r.at += now
			pending = append(pending, r)
			sort.SliceStable(pending, func(i, j int) bool { return pending[i].at < pending[j].at })
		}
	}
}

// injectFault applies one random fault and returns its repair, with the
// delay after which it is due.
func (f *Fabric) injectFault(rng *rand.Rand, switches []*Node, log func(string, ...any)) (repair, bool) {
	sw := switches[rng.IntN(len(switches))]
	var linked []int
	for _, p := range sw.Ports[1:] {
		if p.Remote != nil && p.Remote.Node.IsSwitch() {
			linked = append(linked, int(p.Num))
		}
	}
	if len(linked) == 0 {
		return repair{}, false
	}
	port := linked[rng.IntN(len(linked))]
	switch rng.IntN(3) {
	case 0:
		kv := []any{"switch", sw.Name, "port", port}
		_ = f.SetDropRate(sw.Name, port, chaosDropRate)
		log("sim fault: lossy link", kv...)
		return repair{at: chaosLossy, msg: "lossy link", kv: kv, fn: func() { _ = f.SetDropRate(sw.Name, port, 0) }}, true
	case 1:
		kv := []any{"switch", sw.Name, "port", port}
		_ = f.SetLinkState(sw.Name, port, false, true)
		log("sim fault: link down, re-routed", kv...)
		return repair{at: chaosLinkDown, msg: "link down", kv: kv, fn: func() { _ = f.SetLinkState(sw.Name, port, true, true) }}, true
	default:
		other := switches[rng.IntN(len(switches)-1)]
		if other == sw {
			other = switches[len(switches)-1] // any switch but sw
		}
		lid, _ := f.LIDOf(other.Name, 0)
		if lid == 0 {
			return repair{}, false
		}
		kv := []any{"switch", sw.Name, "lid", lid, "port", port}
		_ = f.SetForwardOverride(sw.Name, lid, uint8(port))
		log("sim fault: data plane diverges from the LFT", kv...)
		return repair{at: chaosDivergence, msg: "data plane divergence", kv: kv, fn: func() { f.ClearForwardOverrides(sw.Name) }}, true
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
