// Package logonce remembers what the log last said of something, so that
// a condition is logged once when it begins, once when it changes and
// once when it ends, not at every observation (docs/architecture.md,
// "HTTP pages and logs"). The exporter's trackers use it: a
// destination's state, a discovery selector's refreshes, a link's
// counters and the link evidence's cap.
//
// A State holds one thing's state; Observe says when it changed, and
// from what:
//
//	var st logonce.State[string]
//	if c, changed := st.Observe(kind, now); changed && c.Known {
//		logger.Log("msg", "changed", "from", c.From, "for", now.Sub(c.Since), "seen", c.Count)
//	}
package logonce

import "time"

// State is the state of one thing as the log last said it: its value,
// since when, and how many observations saw it since. The zero State
// knows nothing yet. A State is not safe for concurrent use: its owner's
// lock guards it.
type State[S comparable] struct {
	known bool
	cur   S
	since time.Time
	count uint64
}

// Change is what an observation changed: the state before it (Known
// false: none, this was the first observation), when that state began
// and how many observations saw it.
type Change[S comparable] struct {
	Known bool
	From  S
	Since time.Time
	Count uint64
}

// Observe records one observation of s at now. It reports changed, with
// the state left, when s differs from the state known or is the first
// observation; the new state begins at now.
func (t *State[S]) Observe(s S, now time.Time) (c Change[S], changed bool) {
	if t.known && s == t.cur {
		t.count++
		return Change[S]{}, false
	}
	c = Change[S]{Known: t.known, From: t.cur, Since: t.since, Count: t.count}
	t.known, t.cur, t.since, t.count = true, s, now, 1
	return c, true
}

// Current is the state known (ok false: none yet), since when, and how
// many observations saw it.
func (t *State[S]) Current() (s S, since time.Time, count uint64, ok bool) {
	return t.cur, t.since, t.count, t.known
}
