// Package memtest measures the heap for tests that bound what a structure
// keeps: the bytes of live objects after two collections (the second
// frees what the first's finalizers released).
package memtest

import "runtime"

// HeapAlloc returns the bytes of heap objects still live after two
// collections.
func HeapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
