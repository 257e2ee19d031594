package collector

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/ibtracer/ibtracer_exporter/collector/fleet"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// fakeInventory is an SA that answers what the test says.
type fakeInventory struct {
	mu    sync.Mutex
	ports []fleet.InventoryPort
	err   error
	calls int
}

func (f *fakeInventory) Ports(context.Context) ([]fleet.InventoryPort, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	return append([]fleet.InventoryPort(nil), f.ports...), nil
}

func (f *fakeInventory) set(ports []fleet.InventoryPort, err error) {
	f.mu.Lock()
	f.ports, f.err = ports, err
	f.mu.Unlock()
}

func caPort(guid uint64, port uint8, lid uint16, desc string) fleet.InventoryPort {
	return fleet.InventoryPort{NodeGUID: guid, PortGUID: guid + uint64(port), LID: lid, Port: port, NodeType: ibmad.NodeTypeCA, NodeDesc: desc}
}

func testInventory() []fleet.InventoryPort {
	return []fleet.InventoryPort{
		caPort(0x100, 1, 10, "db01 HCA-1"),
		caPort(0x200, 1, 11, "db02 HCA-1"),
		caPort(0x300, 1, 12, "web01 HCA-1"),
		caPort(0x300, 2, 13, "web01 HCA-1"),
		caPort(0x400, 1, 0, "down01 HCA-1"), // no LID: not active
		{NodeGUID: 0x900, PortGUID: 0x900, LID: 1, Port: 0, NodeType: ibmad.NodeTypeSwitch, NodeDesc: "leaf01"},
		{NodeGUID: 0x900, PortGUID: 0x900, LID: 1, Port: 3, NodeType: ibmad.NodeTypeSwitch, NodeDesc: "leaf01"},
	}
}

// Discovery on a fake SA: the set follows the SA; a failed refresh keeps
// the set; a port that disappears is dropped with its series.
func TestDiscoveryRefresh(t *testing.T) {
	fc := newFakeClock(time.Unix(1800000000, 0))
	e := New(log.NewNopLogger(), "seed")
	e.clock = fc
	defer e.Stop()
	inv := &fakeInventory{ports: testInventory()}
	e.setInventory(inv)
	e.Apply(mustConfig(t, "interval: 1h\ndestinations:\n  - {name: explicit, lid: 40}\ndiscover:\n  - all: true\n    refresh: 1m\n"))
	current := func() string {
		var out []string
		for _, s := range e.destinations() {
			out = append(out, s.cfg.Name)
		}
		return strings.Join(out, ",")
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: destinations %s", what, current())
			}
			time.Sleep(time.Millisecond)
		}
	}
	const want = "db01 HCA-1/1,db02 HCA-1/1,explicit,web01 HCA-1/1,web01 HCA-1/2"
	waitFor("first refresh", func() bool { return current() == want })
	if !e.dests.get("db01 HCA-1/1").atPhase || e.dests.get("db01 HCA-1/1").hops || !e.dests.get("explicit").hops {
		t.Fatal("discovered destinations: at their phase, no hop series; explicit ones: hop series")
	}
	// The SA goes down: the refresh fails, the set stays.
	inv.set(nil, errors.New("SA: timeout"))
	refreshes := e.refreshCounts
	waitFor("failed refresh", func() bool {
		if _, f := refreshes(); f >= 1 {
			return true
		}
		fc.Advance()
		return false
	})
	if got := current(); got != want {
		t.Fatalf("after a failed refresh: %s, want %s", got, want)
	}
	// db02 leaves the fabric: gone at the next good refresh, series too.
	var left []fleet.InventoryPort
	for _, p := range testInventory() {
		if p.NodeGUID != 0x200 {
			left = append(left, p)
		}
	}
	inv.set(left, nil)
	waitFor("db02 dropped", func() bool {
		if current() == "db01 HCA-1/1,explicit,web01 HCA-1/1,web01 HCA-1/2" {
			return true
		}
		fc.Advance()
		return false
	})
	perDest, _, _ := seriesCount(t, e)
	if perDest["db02 HCA-1/1"] != 0 || perDest["db01 HCA-1/1"] == 0 {
		t.Fatalf("series after db02 left: %v", perDest)
	}
	// A reload without the selector drops the discovered destinations.
	e.Apply(mustConfig(t, "interval: 1h\ndestinations:\n  - {name: explicit, lid: 40}\n"))
	if got := current(); got != "explicit" {
		t.Fatalf("after removing the selector: %s", got)
	}
}

// noSMPInventory samples by LID, but the local leaf's SwitchInfo is
// refused (an SMP firewall): its table answers.
type noSMPInventory struct{ fakeInventory }

func (*noSMPInventory) Top(context.Context) (uint16, error) {
	return 0, errors.New("SwitchInfo of the local leaf switch: SMPs refused")
}

func (*noSMPInventory) PortAt(context.Context, uint16) (fleet.InventoryPort, bool, error) {
	return fleet.InventoryPort{}, false, errors.New("not asked")
}

// TestSampleByLIDFallsBackToTheTable: where the ports cannot be asked by
// LID, a sampled selector reads the SA's table instead, as before, and
// says so once (issue 41).
func TestSampleByLIDFallsBackToTheTable(t *testing.T) {
	fc := newFakeClock(time.Unix(1800000000, 0))
	var buf logBuffer
	e := New(log.NewLogfmtLogger(&buf), "seed")
	e.clock = fc
	defer e.Stop()
	inv := &noSMPInventory{fakeInventory{ports: testInventory()}}
	e.setInventory(inv)
	e.Apply(mustConfig(t, "interval: 1h\ndiscover:\n  - all: true\n    sample: 2\n    rotate: 1h\n    refresh: 1m\n"))
	deadline := time.Now().Add(60 * time.Second)
	for len(e.destinations()) != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("destinations %d, want 2 from the table", len(e.destinations()))
		}
		fc.Advance()
		time.Sleep(time.Millisecond)
	}
	for i := 0; i < 20; i++ { // more refresh periods: said once
		fc.Advance()
		time.Sleep(time.Millisecond)
	}
	warned := 0
	for _, l := range buf.take(t) {
		if strings.Contains(l["msg"], "cannot sample by LID") {
			warned++
		}
	}
	if warned != 1 {
		t.Errorf("%d warnings, want 1", warned)
	}
	if ok, _ := e.refreshCounts(); ok == 0 {
		t.Error("no good refresh counted")
	}
}
