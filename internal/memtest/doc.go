// Package memtest measures the heap for tests that bound what a structure
// keeps: the bytes of live objects after two collections (the second
// frees what the first's finalizers released).
//
// The package is one file:
//   - memtest.go: HeapAlloc, the live heap bytes after two collections.
package memtest
