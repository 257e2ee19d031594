package localizeeval

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/collector/config"
	"github.com/ibtracer/ibtracer_exporter/collector/fleet"
)

// sampler gives what fleet.Sample gives for one exporter's seed over the
// shared candidate list, kept up to date as the fake clock moves instead
// of scoring and sorting every candidate at every interval: that was
// 14 % of a run at 1,000 exporters and grows with exporters times
// candidates (10,000 x 10,160 scores an interval at 10k).
//
// A candidate's score changes only when its rotation period turns
// (fleet.Sample: the hash of the seed, the selector, its name and its
// period, the period offset by a hash of its name). The sampler keeps
// each candidate's offset in whole seconds, rounded up, which gives the
// same period as fleet.Sample's offset in nanoseconds while the clock and
// the rotation are whole seconds; and low, the candidates of the lowest
// scores, lowest first, such that every other candidate scores higher
// than low's last. When a candidate's period turns it leaves low, and
// its new score enters low if it is below low's last; when low holds
// too few, every candidate is scored again. TestSamplerIsFleetSample
// compares it with fleet.Sample.
type sampler struct {
	ds     []config.Destination
	seed   string
	rotate int64    // seconds
	off    []uint16 // each candidate's period offset, seconds rounded up
	at     int64    // the clock (seconds) low is of; 0: not yet
	low    []scoredDest
}

type scoredDest struct {
	i     int
	score uint64
}

// samplerKeep: low is filled to samplerKeep times what is drawn.
const samplerKeep = 4

// samplerSelector is fleet.Sample's selector index: the fleet has one.
const samplerSelector = "0"

func newSampler(ds []config.Destination, seed string, rotate time.Duration) *sampler {
	s := &sampler{ds: ds, seed: seed, rotate: int64(rotate / time.Second)}
	if rotate%time.Second != 0 || s.rotate > 1<<16 {
		panic("sampler: rotate must be whole seconds, at most 18 hours")
	}
	if s.rotate > 0 {
		s.off = make([]uint16, len(ds))
		for i, d := range ds {
			ns := fleet.Hash64(seed, samplerSelector, d.Name, "offset") % uint64(rotate)
			s.off[i] = uint16((ns + uint64(time.Second) - 1) / uint64(time.Second))
		}
	}
	return s
}

// period is candidate i's rotation period at now (seconds), as fleet.Sample's.
func (s *sampler) period(i int, now int64) int64 {
	if s.rotate == 0 {
		return 0
	}
	return (now - int64(s.off[i])) / s.rotate
}

func (s *sampler) score(i int, now int64) uint64 {
	return fleet.Hash64(s.seed, samplerSelector, s.ds[i].Name, strconv.FormatInt(s.period(i, now), 10))
}

// full scores every candidate at now.
func (s *sampler) full(now int64, keep int) {
	all := make([]scoredDest, len(s.ds))
	for i := range s.ds {
		all[i] = scoredDest{i, s.score(i, now)}
	}
	slices.SortFunc(all, func(a, b scoredDest) int { return cmpU64(a.score, b.score) })
	s.low = slices.Clip(all[:min(keep, len(all))])
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// advance brings low to now, keeping at least need candidates in it.
func (s *sampler) advance(now int64, need int) {
	keep := samplerKeep * need
	if s.at == 0 || len(s.low) < need || (s.rotate > 0 && (now < s.at || now-s.at >= s.rotate)) {
		s.full(now, keep)
		s.at = now
		return
	}
	if s.rotate == 0 || now == s.at {
		return
	}
	var turned []int
	for i := range s.ds {
		if s.period(i, now) != s.period(i, s.at) {
			turned = append(turned, i)
		}
	}
	s.at = now
	for _, i := range turned {
		s.low = slices.DeleteFunc(s.low, func(c scoredDest) bool { return c.i == i })
	}
	if len(s.low) < need {
		s.full(now, keep)
		return
	}
	for _, i := range turned {
		c := scoredDest{i, s.score(i, now)}
		if c.score < s.low[len(s.low)-1].score {
			at, _ := slices.BinarySearchFunc(s.low, c, func(a, b scoredDest) int { return cmpU64(a.score, b.score) })
			s.low = slices.Insert(s.low, at, c)
			if len(s.low) > keep {
				s.low = s.low[:keep]
			}
		}
	}
}

// draw is fleet.Sample(ds, n, seed, 0, now, rotate): the n candidates of
// the lowest scores, in the list's order.
func (s *sampler) draw(n int, now time.Time) []config.Destination {
	if n <= 0 || n >= len(s.ds) {
		return s.ds
	}
	s.advance(now.Unix(), n)
	idx := make([]int, n)
	for k := range idx {
		idx[k] = s.low[k].i
	}
	slices.Sort(idx)
	out := make([]config.Destination, n)
	for k, i := range idx {
		out[k] = s.ds[i]
	}
	return out
}

// TestSamplerIsFleetSample: the sampler draws what fleet.Sample draws,
// over hours of intervals, for samples of 8 and 9 (sampleOf draws one
// more when the exporter's own port is among them).
func TestSamplerIsFleetSample(t *testing.T) {
	var ds []config.Destination
	for i := 0; i < 300; i++ {
		ds = append(ds, config.Destination{Name: "H" + strconv.Itoa(i) + "/1", LID: uint16(i + 1)})
	}
	start := time.Unix(1_800_000_000, 0)
	for _, rotate := range []time.Duration{0, time.Hour, 7 * time.Minute} {
		for e := 0; e < 20; e++ {
			seed := "0x" + strconv.FormatUint(fleet.Hash64("seed", strconv.Itoa(e)), 16)
			s := newSampler(ds, seed, rotate)
			now := start
			for r := 0; r < 400; r++ {
				n := 8 + r%2
				got, want := s.draw(n, now), fleet.Sample(ds, n, seed, 0, now, rotate)
				if !slices.EqualFunc(got, want, func(a, b config.Destination) bool { return a.Name == b.Name }) {
					t.Fatalf("rotate %v, seed %s, %v: sampler %v, fleet.Sample %v", rotate, seed, now, got, want)
				}
				now = now.Add(time.Minute + time.Duration(r%3)*time.Second)
			}
		}
	}
}

// BenchmarkSampleOf10k: one exporter's draw an interval from the 10k
// fleet's 10,160 candidates, by fleet.Sample and by the sampler.
func BenchmarkSampleOf10k(b *testing.B) {
	var ds []config.Destination
	for i := 0; i < 10160; i++ {
		ds = append(ds, config.Destination{Name: "H" + strconv.Itoa(i) + "/1", LID: uint16(i + 1)})
	}
	now := time.Unix(1_800_000_000, 0)
	b.Run("fleet.Sample", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			fleet.Sample(ds, 8, "0x1234", 0, now.Add(time.Duration(i)*time.Minute), time.Hour)
		}
	})
	b.Run("sampler", func(b *testing.B) {
		s := newSampler(ds, "0x1234", time.Hour)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			s.draw(8, now.Add(time.Duration(i)*time.Minute))
		}
	})
}
