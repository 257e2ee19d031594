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
