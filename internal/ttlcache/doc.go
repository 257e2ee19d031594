// Package ttlcache holds the one cache type of the tracer and of the link
// health (docs/architecture.md, "Which file to open"): a bounded map whose
// entries expire a fixed time after they were put, read through an
// injected clock.
//
// The package is one file:
//   - ttlcache.go: Cache (New, Get, Has, Put, Delete, DeleteFunc, Len), its
//     expiry on the injected clock, the sweep and the eviction.
package ttlcache
