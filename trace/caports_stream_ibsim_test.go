package trace

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
)

// holdingTransport holds every NodeRecord query to the SA after the
// first `free` until release is closed (by open, once), or 10 s at most:
// then it opens itself, counting held, so that a failing test ends.
// A listing that named no port before its end would wait for that bound.
type holdingTransport struct {
	ibmad.Transport
	free    int32
	sent    atomic.Int32
	once    sync.Once
	release chan struct{}
	held    atomic.Int32 // queries that waited the whole bound
}

func (h *holdingTransport) open() { h.once.Do(func() { close(h.release) }) }

func (h *holdingTransport) Send(p *ibmad.Packet) error {
	if p.MAD.MgmtClass() == ibmad.ClassSubnAdm && p.MAD.AttrID() == ibmad.AttrNodeRecord && h.sent.Add(1) > h.free {
		select {
		case <-h.release:
		case <-time.After(10 * time.Second):
			h.held.Add(1)
			h.open()
		}
	}
	return h.Transport.Send(p)
}

// TestStreamCAPortsNamesPortsBeforeItEndsOnIbsim: where OpenSM's SA
// answers LID by LID (its tables cut short under ibsim), StreamCAPorts
// names a CA port as soon as its NodeRecord comes, while the later LIDs
// are still to be asked: every NodeRecord query after the first 8 is
// held until a port was named, and none had to wait for the bound. The
// ports named are those the list returns, each once, and those a
// directed-route walk finds.
func TestStreamCAPortsNamesPortsBeforeItEndsOnIbsim(t *testing.T) {
	ibsimtest.Require(t)
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "fattree-128.net"), ibsimtest.Options{KeepSM: true, SMHost: true})
	ht := &holdingTransport{Transport: fab.Dial("H0-0", false), free: 8, release: make(chan struct{})}
	e := ibmad.NewEngine(ht, ibmad.Options{Timeout: 20 * time.Second})
	t.Cleanup(func() { e.Close() })
	tr := New(e, Options{Validate: ValidateOff})
	var mu sync.Mutex
	named := map[uint16]Destination{}
	ds, err := tr.StreamCAPorts(context.Background(), func(d Destination) {
		mu.Lock()
		defer mu.Unlock()
		if _, dup := named[d.LID]; dup {
			t.Errorf("LID %d named twice", d.LID)
		}
		named[d.LID] = d
		ht.open()
	})
	if err != nil {
		t.Fatalf("StreamCAPorts: %v", err)
	}
	if n := ht.held.Load(); n > 0 || ht.sent.Load() <= 8 {
		t.Fatalf("%d NodeRecord queries (of %d) waited 10 s for a port to be named: the listing named none before its end",
			n, ht.sent.Load())
	}
	if len(named) != len(ds) {
		t.Fatalf("%d ports named, %d listed", len(named), len(ds))
	}
	for _, d := range ds {
		if named[d.LID] != d {
			t.Fatalf("listed %+v, named %+v", d, named[d.LID])
		}
	}
	sameCAPorts(t, ds, caPortsOf(t, e))
}
