package sim

import (
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/internal/memtest"
)

// TestIdleTransportIsSmall: a transport that receives nothing holds
// little memory. ibtracer-fabric attaches one per node for the agents
// (10,432 on the capacity benchmark's fabric), where a receive queue
// allocated whole (1,024 slots) was 94 MB of its live heap.
func TestIdleTransportIsSmall(t *testing.T) {
	topo, err := FatTree2(2, 1, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(topo, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 2000
	trs := make([]*Transport, 0, n)
	before := memtest.HeapAlloc()
	for i := 0; i < n; i++ {
		tr, err := f.Attach("H0-0", 0)
		if err != nil {
			t.Fatal(err)
		}
		trs = append(trs, tr)
	}
	per := (int64(memtest.HeapAlloc()) - int64(before)) / n
	// The node's transport list is copied on every Attach: that garbage
	// is collected, the list itself is 8 bytes a transport.
	t.Logf("%d bytes per idle transport", per)
	if per > 1024 {
		t.Errorf("%d bytes per idle transport, want at most 1024", per)
	}
	// The queue still takes QueueDepth MADs and counts the rest.
	tr := trs[0]
	for i := 0; i < QueueDepth+5; i++ {
		p := tr.packet()
		p.MAD[0] = byte(i)
		tr.enqueue(p)
	}
	if o := tr.Overflows(); o != 5 {
		t.Errorf("%d overflows, want 5", o)
	}
	var p ibmad.Packet
	for i := 0; i < QueueDepth; i++ {
		if err := tr.Recv(&p); err != nil || p.MAD[0] != byte(i) {
			t.Fatalf("MAD %d: first byte %d, %v: want FIFO order", i, p.MAD[0], err)
		}
	}
	for _, tr := range trs {
		tr.Close()
	}
	if err := tr.Recv(&p); err != ibmad.ErrClosed {
		t.Errorf("Recv after Close: %v, want ErrClosed", err)
	}
}
