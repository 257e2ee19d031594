package fleet

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/collector/config"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// lidFabric is a LIDInventory of a fabric with ports at LIDs 1..top: a
// switch every 10th LID, a gap every 7th, a CA port elsewhere. It counts
// what it is asked, and fails the table: a sampled selector must not
// read it.
type lidFabric struct {
	top    uint16
	topErr error
	tops   int
	gets   map[uint16]int
}

func (f *lidFabric) Ports(context.Context) ([]InventoryPort, error) {
	return nil, errors.New("the whole table was asked for")
}

func (f *lidFabric) Top(context.Context) (uint16, error) {
	f.tops++
	return f.top, f.topErr
}

func (f *lidFabric) PortAt(_ context.Context, lid uint16) (InventoryPort, bool, error) {
	if f.gets == nil {
		f.gets = map[uint16]int{}
	}
	f.gets[lid]++
	switch {
	case lid > f.top || lid%7 == 0:
		return InventoryPort{}, false, nil
	case lid%10 == 0:
		return InventoryPort{NodeGUID: uint64(lid) << 8, PortGUID: uint64(lid) << 8, LID: lid, NodeType: ibmad.NodeTypeSwitch}, true, nil
	}
	return caPort(uint64(lid)<<8, 1, lid, "host"), true, nil
}

func (f *lidFabric) asked() int {
	n := 0
	for _, c := range f.gets {
		n += c
	}
	return n
}

// TestSampleByLID: a sampled selector of every CA port draws its sample
// by LID: N CA ports (never a switch, a gap or itself) for about N
// NodeRecord Gets and one SwitchInfo, not the whole table; nothing more
// until a LID's period turns or the refresh runs out; over the rotation
// the sample changes a port at a time and reaches every CA port (issue
// 41: 10,000 exporters each reading a 20,000-record table every refresh
// is the SA's heaviest load).
func TestSampleByLID(t *testing.T) {
	const n = 8
	f := &lidFabric{top: 2000}
	sel := &config.Selector{All: true, Sample: n, Rotate: config.Duration(time.Hour), Refresh: config.Duration(30 * time.Minute)}
	var s lidSampler
	now := time.Unix(1800000000, 0)
	self := uint64(0)
	got, err := s.pass(context.Background(), f, sel, 0, "seed", self, now)
	if err != nil || len(got) != n {
		t.Fatalf("first pass: %d ports, %v", len(got), err)
	}
	for _, p := range got {
		if p.NodeType != ibmad.NodeTypeCA || p.LID%10 == 0 || p.LID%7 == 0 {
			t.Fatalf("picked %+v: not a CA port", p)
		}
	}
	first := f.asked()
	// A CA port is 77 % of the LIDs: n ports need about n/0.77 Gets.
	if first > 2*n || f.tops != 1 {
		t.Fatalf("first pass: %d Gets and %d SwitchInfo reads for %d ports", first, f.tops, n)
	}
	if _, err := s.pass(context.Background(), f, sel, 0, "seed", self, now.Add(time.Minute)); err != nil || f.asked() != first || f.tops != 1 {
		t.Fatalf("a minute later: %d more Gets, %d SwitchInfo reads, %v; want none", f.asked()-first, f.tops-1, err)
	}
	// The exporter's own port is never its destination.
	self = got[0].PortGUID
	again, _ := s.pass(context.Background(), f, sel, 0, "seed", self, now.Add(time.Minute))
	for _, p := range again {
		if p.PortGUID == self {
			t.Fatal("the exporter's own port was picked")
		}
	}
	// Over two rotations, passes as often as the exporter makes them.
	seen := map[uint16]bool{}
	prev := again
	maxChange, changes, passes := 0, 0, 0
	step := resampleEvery(time.Hour, n)
	for at := now; at.Before(now.Add(48 * time.Hour)); at = at.Add(step) {
		cur, err := s.pass(context.Background(), f, sel, 0, "seed", self, at)
		if err != nil || len(cur) != n {
			t.Fatalf("at %v: %d ports, %v", at.Sub(now), len(cur), err)
		}
		changed := 0
		for _, p := range cur {
			seen[p.LID] = true
			if !containsLID(prev, p.LID) {
				changed++
			}
		}
		maxChange = max(maxChange, changed)
		changes += changed
		passes++
		prev = cur
	}
	if maxChange > n/2 || float64(changes)/float64(passes) > 1 {
		t.Errorf("up to %d ports (%.2f on average) changed from one pass to the next, want a few at a time", maxChange, float64(changes)/float64(passes))
	}
	// 48 rotations of 8 from 1,558 CA ports: the sample wanders widely.
	if len(seen) < 48*n/2 {
		t.Errorf("%d distinct ports sampled over 48 rotations, want at least %d", len(seen), 48*n/2)
	}
	hours := 48.0
	if perHour := float64(f.asked()) / hours; perHour > 4*n {
		t.Errorf("%.1f Gets an hour for a sample of %d rotating hourly", perHour, n)
	}
	t.Logf("%d Gets and %d SwitchInfo reads over 48 h (%d distinct ports)", f.asked(), f.tops, len(seen))
}

func containsLID(ps []InventoryPort, lid uint16) bool {
	for _, p := range ps {
		if p.LID == lid {
			return true
		}
	}
	return false
}

// TestSampleByLIDTopFails: without the local leaf's SwitchInfo (an SMP
// firewall) the pass fails, saying why; the loop counts and logs it.
func TestSampleByLIDTopFails(t *testing.T) {
	f := &lidFabric{top: 100, topErr: errors.New("SMPs refused")}
	sel := &config.Selector{All: true, Sample: 4, Rotate: config.Duration(time.Hour), Refresh: config.Duration(time.Hour)}
	var s lidSampler
	if _, err := s.pass(context.Background(), f, sel, 0, "seed", 0, time.Unix(1800000000, 0)); err == nil {
		t.Fatal("no error without the top LID")
	}
}

// TestFleetRestartIsSpread: 10,000 exporters that start in the same
// second (every node rebooted) begin over StartSpread, each at a time its
// seed gives, so that their first passes (about N LIDs asked and one
// SwitchInfo each) stay under 2,000 a second: issue 41's budget for the
// SA in a restart, which the ports' SMAs now carry instead, each its own
// share.
func TestFleetRestartIsSpread(t *testing.T) {
	const exporters, n = 10000, 8
	perSecond := map[int64]int{}
	for k := 0; k < exporters; k++ {
		d := startDelay(fmt.Sprintf("0x%016x", 0x0002c90300001000+uint64(k)), 0, 30*time.Minute)
		if d < 0 || d >= StartSpread {
			t.Fatalf("delay %v outside [0, %v)", d, StartSpread)
		}
		perSecond[int64(d/time.Second)]++
	}
	// The LIDs one exporter's first pass asks, on a fabric of 20,000
	// LIDs, over a hundred seeds.
	f := &lidFabric{top: 20000}
	sel := &config.Selector{All: true, Sample: n, Rotate: config.Duration(time.Hour), Refresh: config.Duration(30 * time.Minute)}
	for k := 0; k < 100; k++ {
		var s lidSampler
		if _, err := s.pass(context.Background(), f, sel, 0, fmt.Sprint(k), 0, time.Unix(1800000000, 0)); err != nil {
			t.Fatal(err)
		}
	}
	perPass := float64(f.asked()) / 100
	peak := 0
	for _, c := range perSecond {
		peak = max(peak, c)
	}
	if load := float64(peak) * perPass; load > 2000 {
		t.Errorf("the busiest second starts %d exporters, %.0f asks (%.1f each): over 2,000", peak, load, perPass)
	}
	t.Logf("%d exporters over %d s: busiest second %d starts, %.1f asks each: %.0f in it", exporters, len(perSecond), peak, perPass, float64(peak)*perPass)
}
