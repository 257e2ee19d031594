package trace

import (
	"context"
	"sync"
	"time"

	"github.com/ibtracer/ibtracer_exporter/internal/ttlcache"
)

// What a tracer's traces share is kept in bounded TTL caches on the
// tracer's clock, and what several of them need at once is asked by one
// of them: one flight per question.

// ttlCache is the package's one cache type, internal/ttlcache's (its
// comment says how it is bounded and expires), shared with the link
// health (linkhealth).
type ttlCache[K comparable, V any] = ttlcache.Cache[K, V]

// cacheSize bounds every cache of a tracer.
const cacheSize = ttlcache.Size

// newTTLCache returns a cache of at most size entries that live for ttl.
func newTTLCache[K comparable, V any](ttl time.Duration, size int, now func() time.Time) *ttlCache[K, V] {
	return ttlcache.New[K, V](ttl, size, now)
}

// One flight per question (docs/architecture.md, "Facts shared by a
// run"): what several concurrent traces need at once (an SMP's answer
// within Options.ShareFacts, a hop's verdict within
// Options.ShareValidation, whether a node runs the agent) is asked by the
// first of them; the others wait for its answer instead of asking again.
// Without this, 32 concurrent traces that cross one leaf switch ask its
// agent up to 32 times before the first verdict is kept.

// flight is a question one asker is asking: done closes when it has
// landed, with its answer v (or err).
type flight[V any] struct {
	done  chan struct{}
	owner any
	v     V
	err   error
}

// flights are the questions in flight, by key.
type flights[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]*flight[V]
	// waiting, when set (tests), is called as an asker starts to wait.
	waiting func()
}

// join returns nil when owner is to ask k itself (it leads the flight and
// must land it), or the flight another owner leads.
func (g *flights[K, V]) join(k K, owner any) *flight[V] {
	g.mu.Lock()
	defer g.mu.Unlock()
	if f := g.m[k]; f != nil && f.owner != owner {
		if g.waiting != nil {
			g.waiting()
		}
		return f
	}
	if g.m == nil {
		g.m = map[K]*flight[V]{}
	}
	g.m[k] = &flight[V]{done: make(chan struct{}), owner: owner}
	return nil
}

// land ends owner's flight for k, if owner leads one, with its answer:
// the askers waiting take it.
func (g *flights[K, V]) land(k K, owner any, v V, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if f := g.m[k]; f != nil && f.owner == owner {
		delete(g.m, k)
		f.v, f.err = v, err
		close(f.done)
	}
}

// wait waits for f to land, or for ctx: it says whether f landed.
func (f *flight[V]) wait(ctx context.Context) bool {
	select {
	case <-f.done:
		return true
	case <-ctx.Done():
		return false
	}
}
