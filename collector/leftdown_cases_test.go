package collector

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// TestLinkLeftPendingAtChange: the near end does not answer the read at
// the trace that sees the change (its SMA busy during the SM's sweep):
// the link is kept pending, without a series or link_info; the next
// trace that reads it Down makes it an entry, with the warning.
func TestLinkLeftPendingAtChange(t *testing.T) {
	e, f, dests, spine, port, crossing, buf := leftExporter(t)
	link := simLink(t, f, spine, port)
	if err := f.SetLinkState(spine, port, false, true); err != nil {
		t.Fatal(err)
	}
	if err := f.SetSilent(spine, true); err != nil {
		t.Fatal(err)
	}
	e.traceEach(crossing)
	if got := leftDown(t, e); len(got) != 0 {
		t.Fatalf("unanswered at the change: link_left_down %v, want none yet", got)
	}
	if info := linkInfo(t, e); len(info) != 0 {
		t.Fatalf("unanswered at the change: link_info %v, want none", info)
	}
	for _, n := range crossing {
		if s := e.dests.get(n); len(s.left) != 1 || !s.left[0].pending {
			t.Fatalf("%s: entries %+v, want the link pending", n, s.left)
		}
	}
	if w := withMsg(buf.take(t), "path left a link that is down"); len(w) != 0 {
		t.Fatalf("warned before a read said down: %v", w)
	}
	if err := f.SetSilent(spine, false); err != nil {
		t.Fatal(err)
	}
	e.traceAll(t, dests)
	if got := leftDown(t, e); len(got) != 1 || got[link] != float64(len(crossing)) {
		t.Fatalf("answered Down: link_left_down %v, want {%v: %d}", got, link, len(crossing))
	}
	wantDescs(t, f, linkInfo(t, e), leftDown(t, e), nil)
	if w := withMsg(buf.take(t), "path left a link that is down"); len(w) != len(crossing) || w[0]["port_state"] != "Down" {
		t.Fatalf("warnings %v, want %d", w, len(crossing))
	}
}

// TestLinkLeftPendingGoes: a pending link read Active at the next trace
// goes without a series (a re-balancing around a working link); one
// never answered goes after 30 minutes.
func TestLinkLeftPendingGoes(t *testing.T) {
	for _, answers := range []bool{true, false} {
		e, f, _, spine, _, crossing, buf := leftExporter(t)
		s := e.dests.get(crossing[0])
		old := s.last
		moveOffSpine(t, f, old, s.target.LID, spine)
		if err := f.SetSilent(spine, true); err != nil {
			t.Fatal(err)
		}
		e.traceAll(t, crossing[:1])
		if s.last.Signature() == old.Signature() || len(s.left) == 0 {
			t.Fatalf("path %s, entries %+v: want a change with a pending link", pathString(s.last), s.left)
		}
		if err := f.SetSilent(spine, !answers); err != nil {
			t.Fatal(err)
		}
		if !answers {
			e.clock.(*fakeClock).Add(29 * time.Minute)
			e.traceAll(t, crossing[:1])
			if len(s.left) == 0 {
				t.Fatal("a pending link unanswered for 29 minutes went")
			}
			e.clock.(*fakeClock).Add(2 * time.Minute)
		}
		e.traceAll(t, crossing[:1])
		if len(s.left) != 0 || len(leftDown(t, e)) != 0 {
			t.Fatalf("answers %v: entries %+v, link_left_down %v: want none", answers, s.left, leftDown(t, e))
		}
		if w := withMsg(buf.take(t), "path left a link that is down"); len(w) != 0 {
			t.Fatalf("answers %v: warned %v", answers, w)
		}
	}
}

// leftDeadlineInterval is TestLinkLeftDeadline's interval: 10 unanswered
// reads take 400 ms (timeout 20 ms, retries 1).
var leftDeadlineInterval = 200 * time.Millisecond

// TestLinkLeftDeadline: the reads of a destination's entries outlast its
// interval: what was read is stored (entries unanswered for 30 minutes
// go), the MADs counted, and the entries left unread stay as they were
// and are read first at the next trace, which drops them.
func TestLinkLeftDeadline(t *testing.T) {
	e, f, dests, spine, port, crossing, _ := leftExporter(t)
	if err := f.SetLinkState(spine, port, false, true); err != nil {
		t.Fatal(err)
	}
	e.traceAll(t, dests)
	s := e.dests.get(crossing[0])
	s.mu.Lock()
	real := s.left[0]
	for i := 0; i < 9; i++ { // more links left, their near ends other ports of the same spine
		en := real
		en.link.RemotePort, en.near.port = uint8(100+i), uint8(100+i)
		s.left = append(s.left, en)
	}
	n0 := len(s.left)
	s.mu.Unlock()
	if err := f.SetSilent(spine, true); err != nil {
		t.Fatal(err)
	}
	e.clock.(*fakeClock).Add(31 * time.Minute)
	for i, last := 1, n0; last > 0; i++ {
		before := s.mads
		e.traceOnce(context.Background(), s, leftDeadlineInterval)
		s.mu.Lock()
		n, mads := len(s.left), s.mads-before-uint64(s.last.MADs)
		s.mu.Unlock()
		t.Logf("trace %d: %d entries of %d, %d reads' MADs", i, n, n0, mads)
		switch {
		case mads == 0:
			t.Fatalf("trace %d: the reads' MADs not counted", i)
		case leftDeadlineInterval >= time.Minute && n != 0:
			t.Fatalf("unanswered for 31 minutes, read within the interval: %d entries kept", n)
		case i == 1 && leftDeadlineInterval < time.Minute && (n == 0 || n == n0):
			t.Fatalf("the reads outlast the interval: %d entries of %d kept, want those not read", n, n0)
		case n >= last:
			t.Fatalf("trace %d: %d entries kept, %d before: want those read dropped", i, n, last)
		}
		last = n
	}
}

// TestLinkLeftDeadlineControl: TestLinkLeftDeadline's reads within the
// interval drop every entry at once.
func TestLinkLeftDeadlineControl(t *testing.T) {
	leftDeadlineInterval = time.Minute
	defer func() { leftDeadlineInterval = 200 * time.Millisecond }()
	TestLinkLeftDeadline(t)
}

// TestLinkLeftStopped: a destination stopped (reload, shutdown) during
// the reads stores nothing.
func TestLinkLeftStopped(t *testing.T) {
	e, f, dests, spine, port, crossing, _ := leftExporter(t)
	if err := f.SetLinkState(spine, port, false, true); err != nil {
		t.Fatal(err)
	}
	e.traceAll(t, dests)
	s := e.dests.get(crossing[0])
	want := fmt.Sprint(s.left)
	if err := f.SetLinkState(spine, port, true, false); err != nil {
		t.Fatal(err)
	}
	stop, cancel := context.WithCancel(context.Background())
	cancel()
	checkLeft(context.Background(), stop, e.st.load().tracer, s, singleLeft(s, s.last), e.clock.Now(), e.logger, &e.leftForgot)
	if got := fmt.Sprint(s.left); got != want {
		t.Fatalf("stopped: entries %s, want %s", got, want)
	}
}

// TestLinkLeftPathsAll: with paths: all a cable crossed only by another
// LID offset's path than the base LID's goes down: link_left_down names
// it; back up, it goes.
func TestLinkLeftPathsAll(t *testing.T) {
	topo, _ := sim.FatTree2(2, 2, 3, 1)
	f, err := sim.New(topo, sim.Options{LMC: 2})
	if err != nil {
		t.Fatal(err)
	}
	agentsBut(t, f, "H0-0")
	lid, _ := f.LIDOf("H1-1", 0)
	e := simExporterAt(t, f, "H0-0", fmt.Sprintf("interval: 1h\n%sdestinations:\n  - {name: multi, lid: %d, paths: all}\n", leftYAML, lid))
	e.Stop()
	s := e.dests.get("multi")
	e.traceOnce(context.Background(), s, time.Minute)
	ps := s.set
	base := crossedLinks(ps.Paths[0])
	for i, r := range ps.Paths[1:] {
		a := &r.Hops[2] // H0-0, L0, the spine, L1, the host
		sp := f.NodeByGUID(a.NodeGUID)
		link := simLink(t, f, sp.Name, int(a.OutPort))
		if !sp.IsSwitch() || len(r.Hops) != 5 || base[link] {
			continue
		}
		t.Logf("offset %d crosses %s[%d], the base LID does not", i+1, sp.Name, a.OutPort)
		if err := f.SetLinkState(sp.Name, int(a.OutPort), false, true); err != nil {
			t.Fatal(err)
		}
		e.traceOnce(context.Background(), s, time.Minute)
		for _, r2 := range s.set.Paths {
			if crossedLinks(r2)[link] {
				t.Fatalf("a path still crosses the link: %s", pathString(r2))
			}
		}
		if got := leftDown(t, e); len(got) != 1 || got[link] != 1 {
			t.Fatalf("LID offset %d re-routed around down link %v: link_left_down %v", i+1, link, got)
		}
		wantDescs(t, f, linkInfo(t, e), leftDown(t, e), nil)
		if err := f.SetLinkState(sp.Name, int(a.OutPort), true, true); err != nil {
			t.Fatal(err)
		}
		e.traceOnce(context.Background(), s, time.Minute)
		if got := leftDown(t, e); len(got) != 0 {
			t.Fatalf("link up again: link_left_down %v", got)
		}
		return
	}
	t.Fatal("no LID offset crosses a spine link the base LID does not")
}

// reloadYAML is the configuration of leftExporter's destinations, by
// LID, with interval and the destination's extra fields.
func reloadYAML(e *Exporter, dests []string, interval, extra string) string {
	yml := "interval: " + interval + "\n" + leftYAML + "destinations:\n"
	for _, n := range dests {
		yml += fmt.Sprintf("  - {name: %s, lid: %d%s}\n", n, e.dests.get(n).target.LID, extra)
	}
	return yml
}

// TestLinkLeftReload: a reload that replaces the destinations' states
// (their interval, paths or label names changed) keeps their left links; one that
// changes the target does not.
func TestLinkLeftReload(t *testing.T) {
	for _, c := range []struct {
		name, interval, extra string
	}{
		{"interval", "30m", ""},
		{"paths: all", "1h", ", paths: all"},
		{"label names", "1h", ", labels: {rack: r1}"},
	} {
		e, f, dests, spine, port, crossing, _ := leftExporter(t)
		link := simLink(t, f, spine, port)
		if err := f.SetLinkState(spine, port, false, true); err != nil {
			t.Fatal(err)
		}
		e.traceAll(t, dests)
		old := e.dests.get(crossing[0])
		e.Apply(mustConfig(t, reloadYAML(e, dests, c.interval, c.extra)))
		e.Stop()
		if e.dests.get(crossing[0]) == old {
			t.Fatalf("%s: the reload kept the state", c.name)
		}
		if got := leftDown(t, e); got[link] != float64(len(crossing)) {
			t.Fatalf("%s reloaded, before a trace: link_left_down %v, want {%v: %d}", c.name, got, link, len(crossing))
		}
		e.traceAll(t, dests)
		if got := leftDown(t, e); len(got) != 1 || got[link] != float64(len(crossing)) {
			t.Fatalf("%s reloaded, link still down: link_left_down %v, want {%v: %d}", c.name, got, link, len(crossing))
		}
	}
	// Another target: the entries stay with the state they were of.
	e, f, dests, spine, port, crossing, _ := leftExporter(t)
	if err := f.SetLinkState(spine, port, false, true); err != nil {
		t.Fatal(err)
	}
	e.traceAll(t, dests)
	other := e.dests.get(dests[0]).target.LID
	e.Apply(mustConfig(t, fmt.Sprintf("interval: 1h\n%sdestinations:\n  - {name: %s, lid: %d}\n", leftYAML, crossing[0], other)))
	e.Stop()
	if other != e.dests.get(crossing[0]).target.LID || len(e.dests.get(crossing[0]).left) != 0 {
		t.Fatalf("target changed to LID %d: entries %+v carried", other, e.dests.get(crossing[0]).left)
	}
}

// TestLinkLeftReloadThenChange: the cable goes down while a reload
// replaces the states, before their first trace: the new states compare
// their first path with the one the replaced states saw.
func TestLinkLeftReloadThenChange(t *testing.T) {
	e, f, dests, spine, port, crossing, _ := leftExporter(t)
	link := simLink(t, f, spine, port)
	e.Apply(mustConfig(t, reloadYAML(e, dests, "30m", "")))
	e.Stop()
	if err := f.SetLinkState(spine, port, false, true); err != nil {
		t.Fatal(err)
	}
	e.traceAll(t, dests)
	if got := leftDown(t, e); len(got) != 1 || got[link] != float64(len(crossing)) {
		t.Fatalf("link_left_down %v, want {%v: %d}", got, link, len(crossing))
	}
}
