package localize

import "sort"

// Evidence is what an exporter's paths say of one link.
type Evidence struct {
	// Paths is the number of paths (current or previous, one per
	// destination) that cross the link.
	Paths int
	// BadPaths is the number of those that are bad now and name the link
	// among the links that can explain it (Path.Suspects).
	BadPaths int
	// Suspicion is the scheme's score (doc.go): the sum over bad paths of
	// 1/h, h the number of the path's suspects left after exoneration.
	Suspicion float64
	// Votes is 007's plain vote: the sum over bad paths that cross the
	// link of 1/h, h the number of links the path crosses.
	Votes float64
}

// LinkEvidence is a link and its evidence.
type LinkEvidence struct {
	Link Link
	Evidence
}

// Accumulator sums paths into evidence per link. The zero value is
// empty and ready; it is not safe for concurrent use.
type Accumulator struct {
	paths []Path
}

// Add adds one destination's path. A path whose Suspects include a link
// it does not cross counts that link as crossed too.
func (a *Accumulator) Add(p Path) { a.paths = append(a.paths, p) }

// Len is the number of paths added.
func (a *Accumulator) Len() int { return len(a.paths) }

// Evidence sums the paths: one entry per link that a path crosses (the
// links of no path are absent), ordered by Link.Less.
func (a *Accumulator) Evidence() []LinkEvidence {
	ev := map[Link]*Evidence{}
	get := func(l Link) *Evidence {
		e := ev[l]
		if e == nil {
			e = &Evidence{}
			ev[l] = e
		}
		return e
	}
	proven := map[Link]bool{} // crossed now by a good path
	for i := range a.paths {
		p := &a.paths[i]
		if !p.Bad {
			for _, l := range p.Links {
				proven[l] = true
			}
		}
	}
	for i := range a.paths {
		p := &a.paths[i]
		crossed := p.Crossed()
		for _, l := range p.Suspects {
			if !contains(crossed, l) {
				crossed = append(crossed, l)
			}
		}
		for _, l := range crossed {
			get(l).Paths++
		}
		if !p.Bad {
			continue
		}
		for _, l := range crossed {
			get(l).Votes += 1 / float64(len(crossed))
		}
		suspects := p.Suspects
		if len(suspects) == 0 { // bad, nobody named: any link can explain it
			suspects = crossed
		}
		for _, l := range suspects {
			get(l).BadPaths++
		}
		left := exonerate(suspects, proven)
		for _, l := range left {
			get(l).Suspicion += 1 / float64(len(left))
		}
	}
	out := make([]LinkEvidence, 0, len(ev))
	for l, e := range ev {
		out = append(out, LinkEvidence{Link: l, Evidence: *e})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Link.Less(out[j].Link) })
	return out
}

// exonerate drops the suspects a good path crosses now, unless none
// would be left: then every suspect stays (a link that drops a share of
// its packets still passes some paths).
func exonerate(suspects []Link, proven map[Link]bool) []Link {
	var left []Link
	for _, l := range suspects {
		if !proven[l] {
			left = append(left, l)
		}
	}
	if len(left) == 0 {
		return suspects
	}
	return left
}

// Rank orders evidence by score, highest first (ties by Link.Less), and
// keeps the links whose score is above 0. score is usually Suspicion
// or, for the 007 baseline, Votes.
func Rank(ev []LinkEvidence, score func(Evidence) float64) []LinkEvidence {
	out := make([]LinkEvidence, 0, len(ev))
	for _, e := range ev {
		if score(e.Evidence) > 0 {
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		si, sj := score(out[i].Evidence), score(out[j].Evidence)
		if si != sj {
			return si > sj
		}
		return out[i].Link.Less(out[j].Link)
	})
	return out
}

// BySuspicion and ByVotes are the scores Rank takes.
func BySuspicion(e Evidence) float64 { return e.Suspicion }

// ByVotes is 007's plain vote (Evidence.Votes).
func ByVotes(e Evidence) float64 { return e.Votes }
