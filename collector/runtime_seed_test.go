package collector

import (
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// The phase's seed: jitter_seed when configured, else the port GUID, which
// the exporter asks the engine for when nobody called SetSeed.
func TestPhaseSeedSources(t *testing.T) {
	start := time.Unix(1800000000, 0)
	t.Run("jitter_seed", func(t *testing.T) {
		fc := newFakeClock(start)
		e := New(log.NewNopLogger(), "")
		e.clock = fc
		defer e.Stop()
		e.Apply(mustConfig(t, "interval: 10s\njitter_seed: rack-7\ndestinations:\n  - {name: a, lid: 3}\n"))
		fc.WaitPending(t, 1, "first trace scheduled")
		if got, want := fc.Next(), start.Add(phase("rack-7", "a", 10*time.Second)%(2*time.Second)); !got.Equal(want) {
			t.Fatalf("first trace at %v, want %v (the jitter_seed's phase)", got.Sub(start), want.Sub(start))
		}
	})
	t.Run("engine port", func(t *testing.T) {
		topo, _ := sim.FatTree2(1, 1, 2, 1)
		f, _ := sim.New(topo, sim.Options{})
		tr, err := f.Attach("H0-1", 0)
		if err != nil {
			t.Fatal(err)
		}
		eng := ibmad.NewEngine(tr, ibmad.Options{})
		defer eng.Close()
		p, err := eng.Port()
		if err != nil {
			t.Fatal(err)
		}
		fc := newFakeClock(start)
		e := New(log.NewNopLogger(), "")
		e.clock = fc
		defer e.Stop()
		e.Apply(mustConfig(t, "interval: 10s\ndestinations:\n  - {name: a, lid: 3}\n"))
		fc.WaitPending(t, 1, "waiting for a seed")
		if e.currentSeed() != "" {
			t.Fatal("a seed without a device")
		}
		e.SetDevice(eng, nil, nil) // and no SetSeed
		want := start.Add(phase(p.PortGUID.String(), "a", 10*time.Second) % (2 * time.Second))
		deadline := time.Now().Add(30 * time.Second)
		for fc.Pending() != 1 || !fc.Next().Equal(want) {
			if time.Now().After(deadline) {
				t.Fatalf("first trace at %v, want %v (the port GUID's phase); seed %q", fc.Next().Sub(start), want.Sub(start), e.currentSeed())
			}
			time.Sleep(time.Millisecond)
		}
	})
}
