package collector

import (
	"runtime"
	"testing"
)

// scripts/soak.sh judges memory by the live heap after the last GC
// (RSS keeps what the heap once needed and follows the GC's goal, not the
// live data), so /metrics must offer it: go_gc_heap_live_bytes, the Go
// runtime metric /gc/heap/live:bytes.
func TestRegistryExportsHeapLive(t *testing.T) {
	runtime.GC() // the runtime metric is set by a GC cycle
	mfs, err := NewRegistry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "go_gc_heap_live_bytes" {
			continue
		}
		if ms := mf.GetMetric(); len(ms) != 1 || ms[0].GetGauge().GetValue() <= 0 {
			t.Fatalf("go_gc_heap_live_bytes: want one positive gauge, got %v", ms)
		}
		return
	}
	t.Fatal("go_gc_heap_live_bytes is not exported")
}
