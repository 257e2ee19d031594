package ibmad_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/madtest"
)

// gatedPortTransport counts Port reads. The first one signals entered and
// waits for release, so a test knows the background refresh is inside the
// transport (holding the engine's port lock) and decides when it ends.
type gatedPortTransport struct {
	*madtest.Transport
	reads   atomic.Int32
	entered chan struct{}
	release chan struct{}
}

func (g *gatedPortTransport) Port() (ibmad.PortAttributes, error) {
	if g.reads.Add(1) == 1 {
		close(g.entered)
		<-g.release
	}
	return g.Transport.Port()
}

// TestPortReadsTransportOnce: a caller of Port that finds no cached port
// while the background refresh is reading it must take the refresh's
// answer, not read the transport a second time (with a transport whose
// Port is slow or blocks, that second read held agent.New). The hook runs
// in the caller between its unlocked look at the cache and the lock, and
// lets the background read finish exactly there.
func TestPortReadsTransportOnce(t *testing.T) {
	tr := &gatedPortTransport{Transport: madtest.New(madtest.Echo), entered: make(chan struct{}), release: make(chan struct{})}
	tr.Attrs.LID = 42
	var hooked atomic.Int32
	restore := ibmad.SetBeforePortLock(func() {
		if hooked.Add(1) == 1 {
			close(tr.release)
		}
	})
	// The refresh interval is long: the engine's only background read is
	// the one at start, which the transport holds until the hook runs.
	e := ibmad.NewEngine(tr, ibmad.Options{PortRefresh: time.Hour})
	t.Cleanup(func() { e.Close(); restore() })
	<-tr.entered

	p, err := e.Port()
	if err != nil {
		t.Fatal(err)
	}
	if p.LID != 42 {
		t.Fatalf("Port LID %d, want 42", p.LID)
	}
	if hooked.Load() != 1 {
		t.Fatalf("the hook ran %d times, want 1: Port did not take the path under test", hooked.Load())
	}
	if n := tr.reads.Load(); n != 1 {
		t.Fatalf("the transport's Port was read %d times, want 1: Port read it again after the background refresh had stored it", n)
	}
}
