package ttlcache

import (
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/internal/fakeclock"
)

func TestTTLCacheExpiresByItsClock(t *testing.T) {
	clock := fakeclock.New(time.Unix(1_700_000_000, 0))
	c := New[int, string](time.Minute, 16, clock.Now)
	forever := New[int, string](0, 16, clock.Now)
	c.Put(1, "one")
	forever.Put(1, "one")
	clock.Add(time.Minute - time.Nanosecond)
	if v, ok := c.Get(1); !ok || v != "one" {
		t.Fatalf("before its time: %q %v", v, ok)
	}
	clock.Add(time.Nanosecond)
	if v, ok := c.Get(1); ok {
		t.Fatalf("after its time: %q still there", v)
	}
	if c.Len() != 0 {
		t.Fatalf("an expired entry read is not dropped: %d left", c.Len())
	}
	clock.Add(1000 * time.Hour)
	if !forever.Has(1) {
		t.Fatal("an entry without a lifetime expired")
	}
	c.Put(2, "two") // Put renews
	clock.Add(30 * time.Second)
	c.Put(2, "deux")
	clock.Add(45 * time.Second)
	if v, _ := c.Get(2); v != "deux" {
		t.Fatalf("renewed entry: %q", v)
	}
}

func TestTTLCacheIsBounded(t *testing.T) {
	clock := fakeclock.New(time.Unix(1_700_000_000, 0))
	const size = 100
	c := New[int, int](time.Minute, size, clock.Now)
	for i := 0; i < 10*size; i++ {
		c.Put(i, i)
		if n := c.Len(); n > size {
			t.Fatalf("%d entries after %d puts, bound %d", n, i+1, size)
		}
	}
	// Expired entries go first: a full cache of expired entries keeps
	// every new one.
	clock.Add(time.Hour)
	for i := 0; i < size; i++ {
		c.Put(-1-i, i)
	}
	for i := 0; i < size*3/4; i++ {
		if !c.Has(-1 - i) {
			t.Fatalf("entry %d of %d fresh ones evicted while expired ones were there", i, size*3/4)
		}
	}
	// Overwriting a key of a full cache evicts nothing.
	n := c.Len()
	c.Put(-1, 7)
	if c.Len() != n {
		t.Fatalf("overwrite changed the size %d -> %d", n, c.Len())
	}
	c.DeleteFunc(func(k int) bool { return k < 0 })
	if c.Len() != 0 {
		t.Fatalf("DeleteFunc left %d", c.Len())
	}
}

// Entries that expire without being read again do not stay: a cache
// whose keys keep changing (verdicts keyed by routes that a flapping
// fabric keeps changing) holds about what one lifetime puts in it, not
// everything up to its bound. The soak saw the live heap grow by 20 KiB a
// minute until this.
func TestTTLCacheSweepsWhatExpired(t *testing.T) {
	clock := fakeclock.New(time.Unix(1_700_000_000, 0))
	c := New[int, string](10*time.Second, 1<<16, clock.Now)
	for i := 0; i < 10_000; i++ { // 10 new keys a second for 1,000 s
		c.Put(i, "v")
		clock.Add(100 * time.Millisecond)
	}
	if n := c.Len(); n > 2*100+1 {
		t.Fatalf("%d entries after 1,000 s of 10 new keys a second with a 10 s lifetime; want about 100 (at most 201)", n)
	}
}
