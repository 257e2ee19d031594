package ttlcache

import (
	"sync"
	"time"
)

// Size is the bound of every cache of the tracer and of the link health:
// a subnet has fewer than 49152 unicast LIDs, and a cache holds at most
// one entry per LID, node or port end of one subnet.
const Size = 1 << 16

// Cache is a map, safe for concurrent use, whose entries expire a fixed
// time after they were put (never, when the time is 0 or less), read
// through an injected clock.
//
// It is bounded. An insert of a new key into a full cache first drops the
// expired entries and then, if more than three quarters of the bound are
// still live, arbitrary live entries (Go's map order) down to three
// quarters: every cache of the tracer holds something that one MAD can
// ask again, so a dropped entry costs that MAD and nothing else. The one
// exception is the link health's previous counter readings: a dropped
// reading costs that port one interval without increments (it reads as
// a first reading), past 65,536 port ends per exporter. Evicting a quarter at once keeps inserts amortised
// O(1). Besides, once per lifetime an insert
// sweeps out what expired unread, so that a cache whose keys keep
// changing (verdicts keyed by routes a flapping fabric keeps changing)
// does not creep up to its bound.
type Cache[K comparable, V any] struct {
	ttl time.Duration
	max int
	now func() time.Time

	mu    sync.Mutex
	m     map[K]entry[V]
	swept time.Time // the last sweep of expired entries
}

type entry[V any] struct {
	v       V
	expires time.Time // zero: never
}

// New returns a cache of at most size entries (at least 4) that
// live for ttl.
func New[K comparable, V any](ttl time.Duration, size int, now func() time.Time) *Cache[K, V] {
	return &Cache[K, V]{ttl: ttl, max: max(size, 4), now: now, m: map[K]entry[V]{}}
}

func (e *entry[V]) live(now time.Time) bool { return e.expires.IsZero() || now.Before(e.expires) }

// Get returns the live value of k.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if ok && !e.live(now) {
		delete(c.m, k)
		ok = false
	}
	return e.v, ok
}

// Has says whether k has a live value.
func (c *Cache[K, V]) Has(k K) bool {
	_, ok := c.Get(k)
	return ok
}

// Put sets k to v for the cache's lifetime.
func (c *Cache[K, V]) Put(k K, v V) {
	now := c.now()
	e := entry[V]{v: v}
	if c.ttl > 0 {
		e.expires = now.Add(c.ttl)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; !ok && len(c.m) >= c.max {
		c.evict(now)
	} else if c.ttl > 0 && now.Sub(c.swept) >= c.ttl {
		// Once a lifetime, drop what expired unread, so that a cache
		// whose keys keep changing holds about one lifetime's worth of
		// them, not everything up to its bound (O(n) once per lifetime).
		c.sweep(now)
	}
	c.m[k] = e
}

// sweep drops the expired entries; c.mu is held.
func (c *Cache[K, V]) sweep(now time.Time) {
	c.swept = now
	for k, e := range c.m {
		if !e.live(now) {
			delete(c.m, k)
		}
	}
}

// evict makes room (see the type's comment); c.mu is held.
func (c *Cache[K, V]) evict(now time.Time) {
	c.sweep(now)
	keep := c.max * 3 / 4
	for k := range c.m {
		if len(c.m) <= keep {
			break
		}
		delete(c.m, k)
	}
}

// Delete drops k.
func (c *Cache[K, V]) Delete(k K) {
	c.mu.Lock()
	delete(c.m, k)
	c.mu.Unlock()
}

// DeleteFunc drops every key for which drop is true.
func (c *Cache[K, V]) DeleteFunc(drop func(K) bool) {
	c.mu.Lock()
	for k := range c.m {
		if drop(k) {
			delete(c.m, k)
		}
	}
	c.mu.Unlock()
}

// Len counts the entries, expired ones not yet dropped included.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
