package localize

import (
	"math"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

func TestNewLinkPutsTheSmallerEndFirst(t *testing.T) {
	for _, c := range []struct {
		a     ibmad.GUID
		ap    uint8
		b     ibmad.GUID
		bp    uint8
		want  Link
		label []string
	}{
		{0x20, 3, 0x10, 7, Link{0x10, 7, 0x20, 3}, []string{"0x0000000000000010", "7", "0x0000000000000020", "3"}},
		{0x10, 7, 0x20, 3, Link{0x10, 7, 0x20, 3}, []string{"0x0000000000000010", "7", "0x0000000000000020", "3"}},
		{0x10, 9, 0x10, 2, Link{0x10, 2, 0x10, 9}, []string{"0x0000000000000010", "2", "0x0000000000000010", "9"}},
	} {
		got := NewLink(c.a, c.ap, c.b, c.bp)
		if got != c.want {
			t.Errorf("NewLink(%v,%d,%v,%d) = %v, want %v", c.a, c.ap, c.b, c.bp, got, c.want)
		}
		if l := got.Labels(); len(l) != len(LabelNames) || l[0] != c.label[0] || l[1] != c.label[1] || l[2] != c.label[2] || l[3] != c.label[3] {
			t.Errorf("%v labels %q, want %q", got, l, c.label)
		}
		if !got.Has(c.a, c.ap) || !got.Has(c.b, c.bp) || got.Has(c.a, c.ap+1) {
			t.Errorf("%v: Has is wrong for its ends", got)
		}
	}
	if !(Link{1, 1, 2, 1}).Less(Link{1, 2, 2, 1}) || (Link{2, 1, 3, 1}).Less(Link{1, 9, 9, 9}) || (Link{1, 1, 2, 1}).Less(Link{1, 1, 2, 1}) {
		t.Error("Less is not the order of the ends")
	}
}

func TestBlameKeepsCausesAndSuspectsOnce(t *testing.T) {
	l1, l2 := NewLink(1, 1, 2, 1), NewLink(2, 2, 3, 1)
	var p Path
	if p.Bad {
		t.Fatal("a new path is bad")
	}
	p.Blame(CauseLost, l1, l2)
	p.Blame(CauseLost, l2)
	p.Blame(CauseLink, l2)
	if !p.Bad || len(p.Causes) != 2 || p.Causes[0] != CauseLost || p.Causes[1] != CauseLink {
		t.Fatalf("causes %v bad %v", p.Causes, p.Bad)
	}
	if len(p.Suspects) != 2 || p.Suspects[0] != l1 || p.Suspects[1] != l2 {
		t.Fatalf("suspects %v, want [%v %v]", p.Suspects, l1, l2)
	}
}

func TestCrossedIsCurrentThenPreviousEachOnce(t *testing.T) {
	a, b, c, d := NewLink(1, 1, 2, 1), NewLink(2, 2, 3, 1), NewLink(2, 3, 4, 1), NewLink(4, 2, 5, 1)
	p := Path{Links: []Link{a, c}, Previous: []Link{a, b, d}}
	got := p.Crossed()
	want := []Link{a, c, b, d}
	if len(got) != len(want) {
		t.Fatalf("crossed %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("crossed %v, want %v", got, want)
		}
	}
}

// A small fat tree: hosts h1..h4 on leaves L1 (h1, h2) and L2 (h3, h4),
// leaves joined by spines S1 and S2. One exporter on h1 traces the rest.
var (
	h1L1 = NewLink(0x101, 1, 0x1, 1)
	h2L1 = NewLink(0x102, 1, 0x1, 2)
	h3L2 = NewLink(0x103, 1, 0x2, 1)
	h4L2 = NewLink(0x104, 1, 0x2, 2)
	L1S1 = NewLink(0x1, 10, 0x11, 1)
	L1S2 = NewLink(0x1, 11, 0x12, 1)
	L2S1 = NewLink(0x2, 10, 0x11, 2)
	L2S2 = NewLink(0x2, 11, 0x12, 2)
)

func find(t *testing.T, ev []LinkEvidence, l Link) Evidence {
	t.Helper()
	for _, e := range ev {
		if e.Link == l {
			return e.Evidence
		}
	}
	t.Fatalf("no evidence for %v", l)
	return Evidence{}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestADeadLinkIsTheOneSuspectAndGoodPathsAreClean(t *testing.T) {
	var a Accumulator
	// h1 -> h2: good, through L1 only.
	a.Add(Path{Links: []Link{h1L1, h2L1}})
	// h1 -> h3: good, over S1.
	a.Add(Path{Links: []Link{h1L1, L1S1, L2S1, h3L2}})
	// h1 -> h4: failed at S2 (L2S2 dead); the previous path says where it went.
	p := Path{Links: []Link{h1L1, L1S2}, Previous: []Link{h1L1, L1S2, L2S2, h4L2}}
	p.Blame(CauseFailed, h1L1, L1S2, L2S2)
	a.Add(p)
	if a.Len() != 3 {
		t.Fatalf("Len %d", a.Len())
	}
	ev := a.Evidence()
	if len(ev) != 8 {
		t.Fatalf("%d links with evidence, want the 8 the paths cross: %+v", len(ev), ev)
	}
	for i := 1; i < len(ev); i++ {
		if !ev[i-1].Link.Less(ev[i].Link) {
			t.Fatalf("not in order: %v then %v", ev[i-1].Link, ev[i].Link)
		}
	}
	want := map[Link]Evidence{
		// h1L1 is crossed by the two good paths too: a share of 1/3
		// against 1 for each of the others, so 1/7 of the vote.
		h1L1: {Paths: 3, BadPaths: 1, Suspicion: 1.0 / 7, Votes: 0.25},
		h2L1: {Paths: 1},
		L1S1: {Paths: 1},
		L2S1: {Paths: 1},
		h3L2: {Paths: 1},
		// L1S2 and L2S2 are crossed by no good path: 3/7 each.
		L1S2: {Paths: 1, BadPaths: 1, Suspicion: 3.0 / 7, Votes: 0.25},
		L2S2: {Paths: 1, BadPaths: 1, Suspicion: 3.0 / 7, Votes: 0.25},
		h4L2: {Paths: 1, Votes: 0.25},
	}
	for l, w := range want {
		if l == h4L2 {
			continue // checked below
		}
		got := find(t, ev, l)
		if got.Paths != w.Paths || got.BadPaths != w.BadPaths || !near(got.Suspicion, w.Suspicion) || !near(got.Votes, w.Votes) {
			t.Errorf("%v: %+v, want %+v", l, got, w)
		}
	}
	got := find(t, ev, h4L2)
	if got.Paths != 1 || got.BadPaths != 0 || got.Suspicion != 0 || !near(got.Votes, 0.25) {
		t.Errorf("h4L2 (past the failure): %+v", got)
	}
}

func TestManyBadPathsPointAtTheLinksTheyShare(t *testing.T) {
	// Two sources' paths to h4 lose the hop behind L2S2; their paths to
	// h3 over S1 are good.
	var a Accumulator
	for _, src := range []Link{h1L1, h2L1} {
		a.Add(Path{Links: []Link{src, L1S1, L2S1, h3L2}})
		p := Path{Links: []Link{src, L1S2, L2S2, h4L2}}
		p.Blame(CauseLost, src, L1S2, L2S2) // the hop behind L2S2 did not answer
		a.Add(p)
	}
	ev := a.Evidence()
	top := Rank(ev, BySuspicion)
	// h1L1 and h2L1 are each crossed by one good path and named by one
	// bad one (share 1/2); L1S2 and L2S2 only by the two bad ones (share
	// 1): each bad path gives 0.2 to its host link, 0.4 to each spine link.
	want := []struct {
		l         Link
		suspicion float64
		bad       int
	}{{L1S2, 0.8, 2}, {L2S2, 0.8, 2}, {h1L1, 0.2, 1}, {h2L1, 0.2, 1}}
	if len(top) != len(want) {
		t.Fatalf("ranked %+v, want %d links", top, len(want))
	}
	for i, w := range want {
		if top[i].Link != w.l || !near(top[i].Suspicion, w.suspicion) || top[i].BadPaths != w.bad {
			t.Errorf("rank %d: %v %+v, want %v suspicion %g, %d bad", i, top[i].Link, top[i].Evidence, w.l, w.suspicion, w.bad)
		}
	}
	sum := 0.0
	for _, e := range ev {
		sum += e.Suspicion
	}
	if !near(sum, 2) {
		t.Errorf("suspicion sums to %g, want the 2 bad paths", sum)
	}
	votes := Rank(ev, func(e Evidence) float64 { return e.Votes }) // 007's plain vote
	if len(votes) != 5 { // h1L1, h2L1, L1S2, L2S2, h4L2 all get plain votes
		t.Fatalf("007 votes on %d links, want 5: %+v", len(votes), votes)
	}
	// h4L2 lies past the lost hop: 007 votes for it (2 bad paths of 4
	// links), our scheme does not name it.
	if e := find(t, ev, h4L2); !near(e.Votes, 0.5) || e.BadPaths != 0 || e.Suspicion != 0 {
		t.Errorf("h4L2 %+v, want 007 votes 0.5 and no suspicion", e)
	}
}

func TestAGoodPathDoesNotClearALinkOutright(t *testing.T) {
	// A lossy link passes some paths: the bad path's only suspect is
	// crossed by a good path, and keeps the whole vote.
	var a Accumulator
	a.Add(Path{Links: []Link{h1L1, L1S1}})
	p := Path{Links: []Link{h1L1, L1S1}}
	p.Blame(CauseLink, L1S1)
	a.Add(p)
	e := find(t, a.Evidence(), L1S1)
	if e.Paths != 2 || e.BadPaths != 1 || !near(e.Suspicion, 1) {
		t.Fatalf("L1S1 %+v, want 2 paths, 1 bad, suspicion 1", e)
	}
	if s := find(t, a.Evidence(), h1L1).Suspicion; s != 0 {
		t.Fatalf("h1L1 suspicion %g, not a suspect", s)
	}
}

func TestABadPathWithoutSuspectsBlamesEveryLink(t *testing.T) {
	var a Accumulator
	a.Add(Path{Links: []Link{h1L1, L1S1, L2S1, h3L2}, Bad: true, Causes: []Cause{CauseLatency}})
	for _, e := range a.Evidence() {
		if e.BadPaths != 1 || !near(e.Suspicion, 0.25) || !near(e.Votes, 0.25) {
			t.Errorf("%v: %+v, want a quarter of the path's vote", e.Link, e.Evidence)
		}
	}
}

func TestASuspectOffThePathCountsAsCrossed(t *testing.T) {
	var a Accumulator
	p := Path{Links: []Link{h1L1}}
	p.Blame(CauseFailed, L1S2)
	a.Add(p)
	e := find(t, a.Evidence(), L1S2)
	if e.Paths != 1 || e.BadPaths != 1 || e.Suspicion != 1 {
		t.Fatalf("L1S2 %+v", e)
	}
}

func TestNoBadPathNoSuspicion(t *testing.T) {
	var a Accumulator
	a.Add(Path{Links: []Link{h1L1, h2L1}})
	a.Add(Path{Links: []Link{h1L1, L1S1, L2S1, h3L2}, Previous: []Link{h1L1, L1S2, L2S2, h3L2}})
	ev := a.Evidence()
	if len(ev) != 7 {
		t.Fatalf("%d links, want 7", len(ev))
	}
	for _, e := range ev {
		if e.BadPaths != 0 || e.Suspicion != 0 || e.Votes != 0 || e.Paths == 0 {
			t.Errorf("%v: %+v", e.Link, e.Evidence)
		}
	}
	if r := Rank(ev, BySuspicion); len(r) != 0 {
		t.Fatalf("ranked %v with no bad path", r)
	}
	if find(t, ev, h1L1).Paths != 2 {
		t.Fatal("h1L1 is crossed by both paths")
	}
	var empty Accumulator
	if ev := empty.Evidence(); len(ev) != 0 {
		t.Fatalf("empty accumulator: %v", ev)
	}
}

func TestAPreviousPathProvesNothing(t *testing.T) {
	// A good destination whose previous path crossed L2S2 does not
	// exonerate L2S2 for a bad path that names it.
	var a Accumulator
	a.Add(Path{Links: []Link{h1L1, L1S1, L2S1, h3L2}, Previous: []Link{h1L1, L1S2, L2S2, h3L2}})
	p := Path{Links: []Link{h1L1, L1S2}}
	p.Blame(CauseFailed, L2S2)
	a.Add(p)
	e := find(t, a.Evidence(), L2S2)
	if e.Paths != 2 || e.BadPaths != 1 || !near(e.Suspicion, 1) {
		t.Fatalf("L2S2 %+v, want 2 paths, 1 bad, suspicion 1", e)
	}
}
