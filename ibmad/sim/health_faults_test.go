package sim

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// TestChaosHealthFaults: Chaos puts the standing health faults in force
// for its whole run and repairs them when it ends.
func TestChaosHealthFaults(t *testing.T) {
	f := chaosFabric(t)
	var logged []string
	inForce := map[string]bool{}
	waits := 0
	wait := func(ctx context.Context, d time.Duration) bool {
		if waits == 0 {
			for _, n := range f.Nodes() {
				for _, p := range n.Ports {
					if p != nil && p.training.Load() != nil {
						inForce["training"] = true
					}
					if p != nil && p.ctr.climb.Load() != nil {
						inForce["climb"] = true
					}
				}
			}
		}
		waits++
		return waits < 3
	}
	f.Chaos(context.Background(), ChaosOptions{Rand: rand.New(rand.NewPCG(1, 2)), Wait: wait,
		Log: func(msg string, kv ...any) { logged = append(logged, msg) }})
	all := strings.Join(logged, "\n")
	if !inForce["training"] || !inForce["climb"] || strings.Count(all, "sim health fault:") != 3 {
		t.Fatalf("in force %v, logged:\n%s", inForce, all)
	}
	for _, n := range f.Nodes() {
		for _, p := range n.Ports {
			if p != nil && (p.training.Load() != nil || p.ctr.climb.Load() != nil) {
				t.Fatalf("%s[%d] still faulted after Chaos", n.Name, p.Num)
			}
		}
	}
}

// TestLinkTrainingPortInfo checks what the simulated SMA reports for a
// degraded link, both ends, and that it is repaired.
func TestLinkTrainingPortInfo(t *testing.T) {
	topo, _ := FatTree2(2, 2, 2, 1)
	f, err := New(topo, Options{})
	if err != nil {
		t.Fatal(err)
	}
	leaf := f.Node("L0")
	var up *Port
	for _, p := range leaf.Ports[1:] {
		if p.Remote != nil && p.Remote.Node.IsSwitch() {
			up = p
			break
		}
	}
	if err := f.SetLinkWidth("L0", int(up.Num), true); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*Port{up, up.Remote} {
		pi := p.Node.portInfo(p, p)
		if pi.LinkWidthActive != 1 || pi.LinkWidthSupported != 3 || pi.PortState != ibmad.PortStateActive {
			t.Fatalf("%s[%d]: %+v", p.Node.Name, p.Num, pi)
		}
	}
	if err := f.SetLinkSpeed("L0", int(up.Num), true); err != nil {
		t.Fatal(err)
	}
	if pi := leaf.portInfo(up, up); pi.LinkSpeedActive != 1 || pi.LinkWidthActive != 2 {
		t.Fatalf("SDR: %+v", pi)
	}
	_ = f.SetLinkSpeed("L0", int(up.Num), false)
	if pi := leaf.portInfo(up, up); pi.LinkSpeedActive != 4 || pi.LinkWidthActive != 2 {
		t.Fatalf("repaired: %+v", pi)
	}
	if err := f.SetLinkWidth("L0", 99, true); err == nil {
		t.Fatal("no error for a port that does not exist")
	}
	if err := f.SetErrorRate("L0", int(up.Num), -1, nil); err == nil {
		t.Fatal("no error for a negative rate")
	}
}
