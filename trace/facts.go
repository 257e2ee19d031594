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
// the tracer asks it once. A node's NodeInfo and PortInfo are keyed by
// the DR path that reaches them (the walk knows no more before it asks);
// a node's description, a switch's SwitchInfo and its LFT blocks by the
// node's GUID. A question in flight is not asked again: the traces that
// need it meanwhile wait for its answer (one flight per fact).
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

// factCall is one question and, once done is closed, its answer.
type factCall struct {
	done chan struct{}
	resp *ibmad.Response
	err  error
	at   time.Time // when it was answered; zero while in flight
}

// facts are the shared answers, each kept for ttl after it came; nil
// (Options.ShareFacts 0 or Off) shares nothing.
type facts struct {
	ttl    time.Duration
	now    func() time.Time
	mu     sync.Mutex
	m      map[factKey]*factCall
	asked  atomic.Int64 // questions sent for the store
	shared atomic.Int64 // answers given to a trace that did not ask
}

func newFacts(o Options) *facts {
	if o.ShareFacts <= 0 {
		return nil
	}
	return &facts{ttl: o.ShareFacts, now: o.Clock.Now, m: map[factKey]*factCall{}}
}

// live says whether c is in flight or answered within ttl (f.mu held).
func (f *facts) live(c *factCall) bool {
	return c.at.IsZero() || f.now().Sub(c.at) < f.ttl
}

// get returns the answer to k: one in flight or still live, which it
// waits for (shared true), or the one ask gets.
func (f *facts) get(ctx context.Context, k factKey, ask func() (*ibmad.Response, error)) (resp *ibmad.Response, shared bool, err error) {
	f.mu.Lock()
	if c := f.m[k]; c != nil && f.live(c) {
		f.mu.Unlock()
		select {
		case <-c.done:
		case <-ctx.Done():
			return nil, true, ctx.Err()
		}
		if c.err == nil {
			f.shared.Add(1)
		}
		return c.resp, true, c.err
	}
	c := &factCall{done: make(chan struct{})}
	if f.room() {
		f.m[k] = c
	}
	f.mu.Unlock()
	f.asked.Add(1)
	c.resp, c.err = ask()
	f.mu.Lock()
	c.at = f.now()
	if c.err != nil && f.m[k] == c { // an error is not kept: the next trace asks again
		delete(f.m, k)
	}
	f.mu.Unlock()
	close(c.done)
	return c.resp, false, c.err
}

// put keeps resp, read afresh, as the answer to k.
func (f *facts) put(k factKey, resp *ibmad.Response) {
	c := &factCall{done: make(chan struct{}), resp: resp, at: f.now()}
	close(c.done)
	f.mu.Lock()
	if f.room() {
		f.m[k] = c
	}
	f.mu.Unlock()
}

// room says whether another fact may be kept (f.mu held): at cacheSize
// the answers no longer live are dropped first.
func (f *facts) room() bool {
	if len(f.m) < cacheSize {
		return true
	}
	for k, c := range f.m {
		if !f.live(c) {
			delete(f.m, k)
		}
	}
	return len(f.m) < cacheSize
}

// fact returns the answer to the directed-route Get(attr, mod) along
// path, which k names: shared with the other traces unless the walk is
// fresh (then it asks, and its answer replaces the shared one).
func (w *walk) fact(k factKey, path ibmad.DRPath, attr ibmad.AttrID, mod uint32) (*ibmad.Response, error) {
	f := w.t.facts
	if f == nil {
		return w.smp(path, attr, mod)
	}
	if w.fresh.Load() {
		resp, err := w.smp(path, attr, mod)
		if err == nil {
			f.put(k, resp)
		}
		return resp, err
	}
	resp, shared, err := f.get(w.ctx, k, func() (*ibmad.Response, error) { return w.smp(path, attr, mod) })
	if shared {
		w.shared.Add(1)
	}
	return resp, err
}

// refresh makes w read every fact itself from now on, forgetting those it
// read or was given: it saw a change.
func (w *walk) refresh() {
	w.fresh.Store(true)
	w.mu.Lock()
	w.nodeAt = map[string]nodeID{}
	w.lft = map[lftKey]*ibmad.LFTBlock{}
	w.mu.Unlock()
}

// reliedOnShared says whether w used an answer another trace asked for.
func (w *walk) reliedOnShared() bool { return w != nil && w.shared.Load() > 0 }

// FactStats counts the tracer's shared facts: Asked, the questions sent
// to fill them, and Shared, the answers a trace took from another
// trace's question rather than asking itself. Both are 0 when
// Options.ShareFacts shares nothing.
type FactStats struct{ Asked, Shared int64 }

// FactStats returns the counts of the facts shared so far.
func (t *Tracer) FactStats() FactStats {
	if t.facts == nil {
		return FactStats{}
	}
	return FactStats{Asked: t.facts.asked.Load(), Shared: t.facts.shared.Load()}
}
