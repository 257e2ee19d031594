package fleet

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/ibtracer/ibtracer_exporter/collector/config"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/internal/logonce"
)

// LIDInventory is an Inventory that can also be asked one LID at a time.
// A sampled selector of every CA port (all: true, sample: N) draws its
// sample from LIDs instead of from the whole NodeRecord table
// (docs/architecture.md, "Discovered destinations"): at 10,000 nodes a
// table is some 20,000 records and 11,000 RMPP segments, for each
// exporter at each refresh, where N ports need about N Gets.
type LIDInventory interface {
	Inventory
	// Top is the highest unicast LID the fabric forwards: the local leaf
	// switch's LinearFDBTop.
	Top(ctx context.Context) (uint16, error)
	// PortAt is the port whose base LID is lid; ok is false when the SA
	// has no record for it (no port, or not a base LID).
	PortAt(ctx context.Context, lid uint16) (p InventoryPort, ok bool, err error)
}

// lidSampler is the state of one sampled selector that draws by LID:
// the top LID and, per LID asked, what the SA said, each kept for the
// selector's refresh period.
type lidSampler struct {
	notBefore     time.Time           // the first pass's time (startDelay)
	fallbackUntil time.Time           // after a failed pass, the table until then
	failing       logonce.State[bool] // whether the last pass failed (said once)
	top           uint16
	topAt         time.Time
	seen          map[uint16]lidAnswer
	asked         int // Gets sent, in all (tests)
}

// lidAnswer is what the SA said of a LID, and when.
type lidAnswer struct {
	port InventoryPort
	ca   bool // a CA port's base LID
	at   time.Time
}

// StartSpread is the span over which the exporters of a fleet that
// starts at once (a reboot of every node) begin to ask the SA: each
// waits a part of it given by its seed (startDelay), at most the
// selector's refresh period.
const StartSpread = 2 * time.Minute

// startDelay is how long selector sel of the exporter whose seed is seed
// waits before its first pass.
func startDelay(seed string, sel int, refresh time.Duration) time.Duration {
	spread := min(StartSpread, refresh)
	if spread <= 0 {
		return 0
	}
	return time.Duration(Hash64(seed, strconv.Itoa(sel), "start") % uint64(spread))
}

// maxAsksPerPass bounds the Gets one pass sends beyond those its sample
// needs; the LIDs it did not reach are asked at the next pass.
const maxAsksPerPass = 64

// pass draws selector sel's sample of n CA ports by LID, as Sample
// draws it from a list: the n ports whose LIDs score lowest, a LID's
// score being a hash of the seed, the selector, the LID and its rotation
// period. It asks the SA only of the LIDs it walks past in score order
// and has no fresh answer for (refresh old), and reads the top LID again
// every refresh. The ports come in port GUID order, without self.
func (s *lidSampler) pass(ctx context.Context, inv LIDInventory, sel *config.Selector, i int, seed string, self uint64,
	now time.Time) ([]InventoryPort, error) {
	refresh := time.Duration(sel.Refresh)
	if s.top == 0 || now.Sub(s.topAt) >= refresh {
		top, err := inv.Top(ctx)
		if err != nil {
			return nil, err
		}
		if top >= 0xC000 {
			top = 0xBFFF
		}
		s.top, s.topAt = top, now
	}
	if s.seen == nil {
		s.seen = map[uint16]lidAnswer{}
	}
	var out []InventoryPort
	when := map[uint64]time.Time{} // when the answer taken for each port was read
	asks := 0
	for _, lid := range lidOrder(s.top, seed, i, now, time.Duration(sel.Rotate)) {
		if len(out) == sel.Sample {
			break
		}
		a, ok := s.seen[lid]
		if !ok || now.Sub(a.at) >= refresh {
			if asks >= sel.Sample+maxAsksPerPass {
				break
			}
			asks++
			s.asked++
			p, found, err := inv.PortAt(ctx, lid)
			if err != nil && ctx.Err() != nil {
				break // the pass's time is up (refreshTimeout): the rest at the next
			}
			if err != nil {
				return nil, err
			}
			a = lidAnswer{port: p, at: now, ca: found && p.NodeType == ibmad.NodeTypeCA && p.Port != 0 && p.LID == lid}
			s.seen[lid] = a
		}
		if !a.ca || (self != 0 && a.port.PortGUID == self) {
			continue
		}
		// A port seen at two LIDs (its LID changed since an answer was
		// kept) is taken once, at the LID of the newer answer.
		if k := slices.IndexFunc(out, func(p InventoryPort) bool { return p.PortGUID == a.port.PortGUID }); k >= 0 {
			if a.at.After(when[a.port.PortGUID]) {
				out[k], when[a.port.PortGUID] = a.port, a.at
			}
			continue
		}
		out, when[a.port.PortGUID] = append(out, a.port), a.at
	}
	slices.SortFunc(out, func(a, b InventoryPort) int {
		if a.PortGUID != b.PortGUID {
			if a.PortGUID < b.PortGUID {
				return -1
			}
			return 1
		}
		return int(a.Port) - int(b.Port)
	})
	return out, nil
}

// lidOrder is LIDs 1..top in score order (Sample's scores, with the LID
// for a destination's name).
func lidOrder(top uint16, seed string, sel int, now time.Time, rotate time.Duration) []uint16 {
	type scored struct {
		lid   uint16
		score uint64
	}
	si := strconv.Itoa(sel)
	sc := make([]scored, top)
	for k := range sc {
		lid := uint16(k + 1)
		name := "lid " + strconv.Itoa(int(lid))
		var ep int64
		if rotate > 0 {
			off := time.Duration(Hash64(seed, si, name, "offset") % uint64(rotate))
			ep = int64(now.Add(-off).Sub(time.Unix(0, 0)) / rotate)
		}
		sc[k] = scored{lid, Hash64(seed, si, name, strconv.FormatInt(ep, 10))}
	}
	slices.SortFunc(sc, func(a, b scored) int {
		switch {
		case a.score < b.score:
			return -1
		case a.score > b.score:
			return 1
		}
		return 0
	})
	out := make([]uint16, len(sc))
	for k := range sc {
		out[k] = sc[k].lid
	}
	return out
}
