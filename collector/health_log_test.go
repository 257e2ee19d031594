package collector

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/linkhealth"
	"github.com/ibtracer/ibtracer_exporter/localize"
)

var ctrSeries = regexp.MustCompile(`ibtracer_link_counters_state\{node_guid="([^"]+)",port="(\d+)",remote_node_guid="([^"]+)",remote_port="(\d+)",state="([a-z]+)"\} 1`)

// linksInState lists the links (node_guid/port-remote_node_guid/remote_port)
// whose ibtracer_link_counters_state series says state.
func linksInState(t *testing.T, e *Exporter, state string) []string {
	t.Helper()
	var out []string
	for _, m := range ctrSeries.FindAllStringSubmatch(scrape(t, e), -1) {
		if m[5] == state {
			out = append(out, m[1]+"/"+m[2]+"-"+m[3]+"/"+m[4])
		}
	}
	sort.Strings(out)
	return out
}

// loggedLinks lists the links the lines name, as linksInState does.
func loggedLinks(lines []map[string]string) []string {
	var out []string
	for _, l := range lines {
		out = append(out, l["node_guid"]+"/"+l["port"]+"-"+l["remote_node_guid"]+"/"+l["remote_port"])
	}
	sort.Strings(out)
	return out
}

// TestLogsLinkCountersUnavailable: the spines' PMAs start answering
// for port 1 whatever port is asked (a firmware bug). Every link with a spine end reads unavailable, and the log says
// so once per link (not once per destination crossing it), with the
// error naming the LID, the port, what was asked and what came back;
// the next interval, still unavailable, logs nothing; when the PMAs
// answer right again, each link logs once that its counters are back.
func TestLogsLinkCountersUnavailable(t *testing.T) {
	e, f, dests := healthExporter(t, "health: {enabled: true, counters: true}\n")
	e.Stop() // traced by hand only: advancing the clock starts no scheduled trace
	var buf logBuffer
	e.logger = log.NewLogfmtLogger(&buf)
	next := func() []map[string]string {
		e.clock.(*fakeClock).Add(time.Hour + time.Second) // past the shared readings' interval
		e.traceAll(t, dests)
		return buf.take(t)
	}
	e.traceAll(t, dests)
	if l := withMsg(buf.take(t), "link counters unavailable"); len(l) != 0 {
		t.Fatalf("counters read: %v", l)
	}
	misanswer := func(m *sim.PMAMisanswer) {
		for _, n := range f.Nodes() {
			if strings.HasPrefix(n.Name, "S") {
				if err := f.SetPMAMisanswer(n.Name, m); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	// For another port: an answer for another attribute no longer
	// reaches the health check (the engine drops it, ibmad's match.go).
	misanswer(&sim.PMAMisanswer{Ports: map[ibmad.AttrID]uint8{
		ibmad.AttrPortCountersExtended: 1, ibmad.AttrPortCounters: 1}})
	lines := next()
	bad := linksInState(t, e, "unavailable")
	if len(bad) == 0 {
		t.Fatal("no link's counters are unavailable: the test proves nothing")
	}
	down := withMsg(lines, "link counters unavailable")
	if got := loggedLinks(down); strings.Join(got, " ") != strings.Join(bad, " ") {
		t.Fatalf("logged links %v; the series say unavailable: %v\n%v", got, bad, lines)
	}
	for _, l := range down {
		if l["level"] != "warn" || !regexp.MustCompile(`PerfMgt PortCounters(Extended)? of LID \d+ port \d+: the PMA answered for port 1`).MatchString(l["err"]) {
			t.Errorf("line %v: want level warn and the error naming LID, port, what was asked and what came back", l)
		}
	}
	if l := withMsg(next(), "link counters unavailable"); len(l) != 0 {
		t.Fatalf("still unavailable the next interval, logged again: %v", l)
	}
	misanswer(nil)
	lines = next()
	if n := len(linksInState(t, e, "unavailable")); n != 0 {
		t.Fatalf("%d links still unavailable", n)
	}
	up := withMsg(lines, "link counters available again")
	if got := loggedLinks(up); strings.Join(got, " ") != strings.Join(bad, " ") {
		t.Fatalf("logged back %v; were unavailable: %v\n%v", got, bad, lines)
	}
	if l := withMsg(next(), "link counters available again"); len(l) != 0 {
		t.Fatalf("logged again the next interval: %v", l)
	}
}

// ctrLink is a link between port 1 of node 0x10 and port 3 of node 0x20
// whose ends' counters read the states given.
func ctrLink(a, b string) *linkhealth.Link {
	end := func(guid ibmad.GUID, port uint8, st string) linkhealth.LinkEnd {
		r := &linkhealth.PortCounterReading{State: st}
		if st == linkhealth.CountersUnavailable {
			r.Err = "PerfMgt PortCounters of LID 7 port 3: no answer"
		}
		return linkhealth.LinkEnd{NodeGUID: guid, Port: port, NodeDesc: "n" + guid.String(), Counters: r}
	}
	return &linkhealth.Link{A: end(0x10, 1, a), B: end(0x20, 3, b)}
}

// TestCtrLogOlderReadingChangesNothing: readings are shared for an
// interval, so a trace may record the older reading after another
// recorded the newer one; the older one neither logs nor changes the
// state the next reading is compared with.
func TestCtrLogOlderReadingChangesNothing(t *testing.T) {
	var c ctrLog
	c.links = map[localize.Link]*ctrSeen{}
	t0 := time.Unix(1_800_000_000, 0)
	t1 := t0.Add(time.Minute)
	steps := []struct {
		l    *linkhealth.Link
		at   time.Time
		want string // the line's msg, "" for none
	}{
		{ctrLink("ok", "first"), t0, ""},
		{ctrLink("ok", "unavailable"), t1, "link counters unavailable"},
		{ctrLink("ok", "ok"), t0, ""}, // the older reading, recorded late
		{ctrLink("ok", "unavailable"), t1, ""},
		{ctrLink("unavailable", "unavailable"), t1.Add(time.Minute), ""},
		{ctrLink("ok", "ok"), t1.Add(2 * time.Minute), "link counters available again"},
	}
	for i, s := range steps {
		ev, ok := c.noteLocked(s.l, s.at)
		msg := ""
		if ok {
			msg = ev.kv[1].(string)
		}
		if msg != s.want {
			t.Fatalf("step %d: logged %q, want %q (%v)", i, msg, s.want, ev.kv)
		}
		if s.want == "link counters unavailable" {
			kv := fmt.Sprint(ev.kv)
			for _, w := range []string{"node_guid 0x0000000000000010", "port 1", "remote_node_guid 0x0000000000000020", "remote_port 3",
				"node_desc n0x0000000000000010", "err PerfMgt PortCounters of LID 7 port 3: no answer"} {
				if !strings.Contains(kv, w) {
					t.Fatalf("step %d: %q not in %v", i, w, kv)
				}
			}
		}
	}
}

// TestCtrLogForgetsLinksOffEveryPath: a scrape forgets the links no
// destination's last path has (they have no series), so one that comes
// back unavailable is logged again; a link a trace recorded while the
// scrape ran (after its mark) is kept.
func TestCtrLogForgetsLinksOffEveryPath(t *testing.T) {
	var c ctrLog
	bad := ctrLink("unavailable", "ok")
	ph := &linkhealth.PathHealth{Links: []linkhealth.Link{*bad}}
	k := localize.NewLink(0x10, 1, 0x20, 3)
	if n := len(c.observe(ph)); n != 1 {
		t.Fatalf("%d lines, want 1", n)
	}
	mark := c.mark()
	if n := len(c.observe(ph)); n != 0 {
		t.Fatalf("%d lines again, want 0", n)
	}
	c.keep(nil, mark) // recorded after the mark: kept
	if n := len(c.observe(ph)); n != 0 {
		t.Fatalf("kept: %d lines, want 0", n)
	}
	c.keep(map[localize.Link]*linkhealth.Link{k: bad}, c.mark()) // still on a path: kept
	if n := len(c.observe(ph)); n != 0 {
		t.Fatalf("on a path: %d lines, want 0", n)
	}
	c.keep(nil, c.mark()) // on no path: forgotten
	if len(c.links) != 0 {
		t.Fatalf("%d links remembered, want 0", len(c.links))
	}
	if n := len(c.observe(ph)); n != 1 {
		t.Fatalf("back unavailable after it was forgotten: %d lines, want 1", n)
	}
}
