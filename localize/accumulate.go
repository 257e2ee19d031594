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
	// Suspicion is the scheme's score (doc.go): the sum over the bad
	// paths that name the link of its part of their vote, in proportion
	// to BadPaths/Paths among the path's suspects. Over all links it sums
	// to the number of bad paths.
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
	// First pass: what crosses each link, which good paths cross it now,
	// and which bad paths name it.
	good := map[Link]int{}
	for i := range a.paths {
		p := &a.paths[i]
		crossed := a.crossed(p)
		for _, l := range crossed {
			get(l).Paths++
		}
		if !p.Bad {
			for _, l := range p.Links {
				good[l]++
			}
			continue
		}
		for _, l := range crossed {
			get(l).Votes += 1 / float64(len(crossed))
		}
		for _, l := range suspectsOf(p, crossed) {
			get(l).BadPaths++
		}
	}
	// Second pass: each bad path's vote, shared among its suspects in
	// proportion to each suspect's share of bad paths among the paths
	// known to have crossed it now, bad or good (a link that good paths
	// cross is exonerated in proportion; the previous path of a good
	// destination proves nothing).
	for i := range a.paths {
		p := &a.paths[i]
		if !p.Bad {
			continue
		}
		suspects := suspectsOf(p, a.crossed(p))
		sum := 0.0
		for _, l := range suspects {
			sum += badShare(ev[l], good[l])
		}
		for _, l := range suspects {
			ev[l].Suspicion += badShare(ev[l], good[l]) / sum
		}
	}
	out := make([]LinkEvidence, 0, len(ev))
	for l, e := range ev {
		out = append(out, LinkEvidence{Link: l, Evidence: *e})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Link.Less(out[j].Link) })
	return out
}

// crossed is what p crosses, its suspects included.
func (a *Accumulator) crossed(p *Path) []Link {
	crossed := p.Crossed()
	for _, l := range p.Suspects {
		if !contains(crossed, l) {
			crossed = append(crossed, l)
		}
	}
	return crossed
}

// suspectsOf is a bad path's suspects: those it names, or, when it
// names none, every link it crosses.
func suspectsOf(p *Path, crossed []Link) []Link {
	if len(p.Suspects) == 0 {
		return crossed
	}
	return p.Suspects
}

// badShare is a suspect's share of bad paths among the bad paths that
// name it and the good paths that cross it now: 1 for a link no good
// path crosses, small for a link many good paths cross. A suspect has at
// least one bad path, so it is above 0.
func badShare(e *Evidence, good int) float64 {
	return float64(e.BadPaths) / float64(e.BadPaths+good)
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

// BySuspicion is the score Rank takes for the scheme's suspicion; a
// caller comparing with 007 ranks by Evidence.Votes the same way.
func BySuspicion(e Evidence) float64 { return e.Suspicion }
