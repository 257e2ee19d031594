package trace

import "sync"

// One flight per question (docs/architecture.md, "Facts shared by a
// run"): what several concurrent traces need at once, a hop's verdict
// within Options.ShareValidation or whether a node runs the agent, is
// asked by the first of them; the others wait for its answer instead of
// asking again. Without this, 32 concurrent traces that cross one leaf
// switch ask its agent up to 32 times before the first verdict is kept.

// flight is a question one walk is asking: done closes when its answer
// has been kept (or found not to be kept).
type flight struct {
	done  chan struct{}
	owner *walk
}

// flights are the questions in flight, by key.
type flights[K comparable] struct {
	mu sync.Mutex
	m  map[K]*flight
	// waiting, when set (tests), is called as a walk starts to wait.
	waiting func()
}

// join returns nil when w is to ask k itself (it leads the flight and
// must land it), or the done channel of the flight another walk leads.
func (g *flights[K]) join(k K, w *walk) <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if f := g.m[k]; f != nil && f.owner != w {
		if g.waiting != nil {
			g.waiting()
		}
		return f.done
	}
	if g.m == nil {
		g.m = map[K]*flight{}
	}
	g.m[k] = &flight{done: make(chan struct{}), owner: w}
	return nil
}

// land ends w's flight for k, if w leads one: the walks waiting look for
// the answer it kept.
func (g *flights[K]) land(k K, w *walk) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if f := g.m[k]; f != nil && f.owner == w {
		delete(g.m, k)
		close(f.done)
	}
}

// wait waits for done, or for w's context: it says whether the flight
// landed.
func (w *walk) wait(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	case <-w.ctx.Done():
		return false
	}
}
