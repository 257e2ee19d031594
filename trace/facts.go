package trace

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// The facts a run shares (docs/architecture.md, "Facts shared by a
// run"): what a directed-route SMP answers does not depend on the
// destination that needs it, so, for Options.ShareFacts, every trace of
// the tracer asks it once. A node's NodeInfo is keyed by the DR path
// that reaches it (the walk knows no more before it asks), and so is a
// CA's PortInfo; a node's description, a switch's PortInfo, SwitchInfo
// and LFT blocks by the node's GUID. A question in flight is not asked
// again: the traces that need it meanwhile wait for its answer (one
// flight per fact).
//
// Sharing never turns a change into a stale answer: a trace that relied
// on another trace's answer and did not succeed (a failure, a mismatch,
// another port than its destination names) is traced again reading
// every fact itself (Tracer.named), and what it reads replaces the
// shared answers.

// factKey names one fact: path for what is keyed by DR path, guid for
// what is keyed by node.
type factKey struct {
	path string
	guid ibmad.GUID
	attr ibmad.AttrID
	mod  uint32
}

func pathFact(path ibmad.DRPath, attr ibmad.AttrID, mod uint32) factKey {
	return factKey{path: string(path), attr: attr, mod: mod}
}

func nodeFact(guid ibmad.GUID, attr ibmad.AttrID, mod uint32) factKey {
	return factKey{guid: guid, attr: attr, mod: mod}
}

// answer is what the walk keeps of an SMP's answer: its 64 bytes of
// attribute data and the round trip of the attempt answered. A kept fact
// is this and its time, not the whole MAD (memory flat: see "Facts
// shared by a run" in docs/architecture.md).
type answer struct {
	data [ibmad.SMPDataSize]byte
	rtt  time.Duration
}

func answerOf(resp *ibmad.Response) answer {
	a := answer{rtt: resp.RTT}
	copy(a.data[:], resp.MAD.SMPData())
	return a
}

// kept is an answered fact and when it came (the tracer's clock, in
// Unix nanoseconds).
type kept struct {
	answer
	at int64
}

// maxFacts bounds the answers kept at once (about 150 bytes each with
// the map's own); past it, a fact is asked and not kept.
const maxFacts = 1 << 18

// worthKeeping says whether the answer a to k serves other traces, and
// is kept for them (f.mu held). Not kept, only shared while in flight:
// a node's description and a switch's SwitchInfo, which the tracer's
// caches keep anyway (Tracer.desc, Tracer.top), and the NodeInfo and
// PortInfo of a CA other than the local one, which only the traces to
// that CA need (a CA forwards nothing). With 10,000 destinations behind
// few switches that is most of the answers a run reads.
func (f *facts) worthKeeping(k factKey, a answer) bool {
	switch k.attr {
	case ibmad.AttrNodeDescription, ibmad.AttrSwitchInfo:
		return false
	case ibmad.AttrNodeInfo:
		var ni ibmad.NodeInfo
		return k.path == "" || (ni.UnmarshalBinary(a.data[:]) == nil && ni.NodeType != ibmad.NodeTypeCA)
	case ibmad.AttrPortInfo: // a switch's (by GUID: walk.hopPortInfo), or where the node's NodeInfo was kept
		_, ok := f.m[factKey{path: k.path, attr: ibmad.AttrNodeInfo}]
		return k.guid != 0 || ok
	}
	return true
}

// facts are the shared answers, each kept for ttl after it came; nil
// (Options.ShareFacts 0) shares nothing. Every ttl the answers no
// longer live are swept, so an exporter that shares for one interval
// holds one interval's facts, not every fact it ever read.
type facts struct {
	ttl     time.Duration
	now     func() time.Time
	mu      sync.Mutex
	m       map[factKey]kept
	flying  flights[factKey, answer] // the questions in flight (shared.go)
	sweepAt time.Time
	asked   atomic.Int64 // questions sent for the store
	shared  atomic.Int64 // answers given to a trace that did not ask
}

func newFacts(o Options) *facts {
	if o.ShareFacts <= 0 {
		return nil
	}
	return &facts{ttl: o.ShareFacts, now: o.Clock.Now, m: map[factKey]kept{}}
}

// get returns the answer to k: one still live or in flight, which it
// waits for (shared true), or the one ask gets.
func (f *facts) get(ctx context.Context, k factKey, ask func() (answer, error)) (a answer, shared bool, err error) {
	f.mu.Lock()
	if c, ok := f.m[k]; ok && f.live(c, f.now()) {
		f.mu.Unlock()
		f.shared.Add(1)
		return c.answer, true, nil
	}
	me := new(byte) // this question's own token: every get asks for itself
	c := f.flying.join(k, me)
	f.mu.Unlock()
	if c != nil {
		if !c.wait(ctx) {
			return a, true, ctx.Err()
		}
		if c.err == nil {
			f.shared.Add(1)
		}
		return c.v, true, c.err
	}
	f.asked.Add(1)
	a, err = ask()
	if err == nil { // an error is not kept: the next trace asks again
		f.put(k, a)
	}
	f.flying.land(k, me, a, err)
	return a, false, err
}

// put keeps a, read afresh, as the answer to k.
func (f *facts) put(k factKey, a answer) {
	f.mu.Lock()
	f.keepLocked(k, a)
	f.mu.Unlock()
}

// live says whether c was answered less than ttl before now.
func (f *facts) live(c kept, now time.Time) bool {
	return now.UnixNano()-c.at < int64(f.ttl)
}

// keepLocked keeps a for k when it is worth keeping (f.mu held), first
// sweeping the answers no longer live when a ttl has passed since the
// last sweep: the live ones move to a new map, since a Go map never
// gives back the room of what is deleted from it.
func (f *facts) keepLocked(k factKey, a answer) {
	now := f.now()
	if !now.Before(f.sweepAt) {
		live := make(map[factKey]kept)
		for k, c := range f.m {
			if f.live(c, now) {
				live[k] = c
			}
		}
		f.m, f.sweepAt = live, now.Add(f.ttl)
	}
	if !f.worthKeeping(k, a) {
		delete(f.m, k) // a fresh read of what is not kept leaves no older answer
		return
	}
	if _, ok := f.m[k]; ok || len(f.m) < maxFacts {
		f.m[k] = kept{answer: a, at: now.UnixNano()}
	}
}
