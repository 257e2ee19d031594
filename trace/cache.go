package trace

import (
	"time"

	"github.com/ibtracer/ibtracer_exporter/internal/ttlcache"
)

// ttlCache is the package's one cache type, internal/ttlcache's (its
// comment says how it is bounded and expires), shared with the link
// health (linkhealth).
type ttlCache[K comparable, V any] = ttlcache.Cache[K, V]

// newTTLCache returns a cache of at most size entries that live for ttl.
func newTTLCache[K comparable, V any](ttl time.Duration, size int, now func() time.Time) *ttlCache[K, V] {
	return ttlcache.New[K, V](ttl, size, now)
}
