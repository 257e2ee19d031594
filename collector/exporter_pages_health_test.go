package collector

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"golang.org/x/net/html"

	"github.com/ibtracer/ibtracer_exporter/collector/pages"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/linkhealth"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// healthPagesExporter has health and evidence on, and five destinations
// from me (0x10): db01 as in pagesExporter (a mismatch at leaf-b after a
// path change) whose last link leaf-b:7 -> db01 is width_degraded; web,
// traced ok on a healthy path through leaf-a; slow, traced ok through
// leaf-a whose link leaf-a:5 -> slow is speed_degraded; gone, traced ok
// through leaf-a:6 and then failing there (no answer past leaf-a port
// 6); idle, never traced. The map names leaf-a "leaf-a-site".
func healthPagesExporter(t *testing.T) *Exporter {
	t.Helper()
	e := New(log.NewNopLogger(), "seed")
	t.Cleanup(e.Stop)
	c := mustConfig(t, `
interval: 1h
evidence: {enabled: true}
destinations:
  - {name: db01, lid: 9}
  - {name: web, lid: 12}
  - {name: slow, lid: 13}
  - {name: gone, lid: 11}
  - {name: idle, lid: 10}
`)
	// Named before Apply: the scheduler reads the configuration from then on.
	c.NodeNames = map[uint64]string{0x20: "leaf-a-site"}
	e.Apply(c)
	start := time.Unix(1800000000, 0)
	hop := func(i int, guid ibmad.GUID, typ ibmad.NodeType, desc string, lid uint16, in, out uint8, st trace.AgentStatus) trace.Hop {
		return trace.Hop{Hop: i, NodeGUID: guid, PortGUID: guid + 1, NodeType: typ, NodeDesc: desc, LID: lid, InPort: in,
			OutPort: out, Agent: st, ValidatedBy: trace.ByAgent, RTT: 2 * time.Microsecond}
	}
	me := hop(0, 0x10, ibmad.NodeTypeCA, "me", 1, 0, 1, trace.AgentSource)
	me.ValidatedBy = ""
	leafA := func(out uint8) trace.Hop {
		return hop(1, 0x20, ibmad.NodeTypeSwitch, "leaf-a", 2, 1, out, trace.AgentValidated)
	}
	ok := func(dlid uint16, hops ...trace.Hop) *trace.Result {
		r := &trace.Result{Status: trace.StatusOK, Start: start, Duration: time.Millisecond, DLID: dlid, Hops: hops}
		trace.NameHops(func(g uint64) string { return e.config().NodeNames[g] }, r)
		return r
	}
	health := func(r *trace.Result, bad map[int]string) *linkhealth.PathHealth {
		ph := &linkhealth.PathHealth{Healthy: true}
		for i := 1; i < len(r.Hops); i++ {
			a, b := &r.Hops[i-1], &r.Hops[i]
			l := linkhealth.Link{Hop: i, Verdict: linkhealth.LinkOK, Healthy: true,
				A: linkhealth.LinkEnd{NodeGUID: a.NodeGUID, NodeDesc: a.NodeDesc, NodeName: a.NodeName, Port: a.OutPort},
				B: linkhealth.LinkEnd{NodeGUID: b.NodeGUID, NodeDesc: b.NodeDesc, NodeName: b.NodeName, Port: b.InPort}}
			if v, ok := bad[i]; ok {
				l.Verdict, l.Healthy, l.Problems = v, false, []string{"4X could be 12X"}
				ph.Healthy = false
				ph.DegradedLinks++
			}
			ph.Links = append(ph.Links, l)
		}
		return ph
	}
	record := func(name string, r *trace.Result, ph *linkhealth.PathHealth) {
		s := e.dests.get(name)
		s.record(r)
		s.observe(r)
		s.setHealth(ph)
	}
	// db01: the first path, then the mismatch through leaf-b.
	r1 := ok(9, me, leafA(4), hop(2, 0x30, ibmad.NodeTypeCA, "db01 HCA-1", 9, 1, 0, trace.AgentValidated))
	record("db01", r1, health(r1, nil))
	r2 := ok(9, me, hop(1, 0x21, ibmad.NodeTypeSwitch, "leaf-b", 3, 1, 7, trace.AgentMismatch),
		hop(2, 0x30, ibmad.NodeTypeCA, "db01 HCA-1", 9, 1, 0, trace.AgentValidated))
	r2.Status, r2.Start = trace.StatusMismatch, start.Add(time.Minute)
	r2.Hops[1].ExpectedInPort, r2.Hops[1].ActualInPort = 1, 2
	record("db01", r2, health(r2, map[int]string{2: linkhealth.LinkWidthDegraded}))
	w := ok(12, me, leafA(3), hop(2, 0x40, ibmad.NodeTypeCA, "web01 HCA-1", 12, 1, 0, trace.AgentValidated))
	record("web", w, health(w, nil))
	sl := ok(13, me, leafA(5), hop(2, 0x41, ibmad.NodeTypeCA, "slow01 HCA-1", 13, 1, 0, trace.AgentValidated))
	record("slow", sl, health(sl, map[int]string{2: linkhealth.LinkSpeedDegraded}))
	g1 := ok(11, me, leafA(6), hop(2, 0x50, ibmad.NodeTypeCA, "gone01 HCA-1", 11, 1, 0, trace.AgentValidated))
	record("gone", g1, health(g1, nil))
	g2 := &trace.Result{Status: trace.StatusUnreachable, Reason: trace.ReasonTimeout, Start: start.Add(time.Minute), Duration: time.Second,
		Err: fmt.Errorf("no answer from hop 2 (port 6 of hop 1)"), Hops: []trace.Hop{me, leafA(6)}}
	trace.NameHops(func(g uint64) string { return e.config().NodeNames[g] }, g2)
	record("gone", g2, health(g2, nil))
	return e
}

// cells are the text of the rows of the tables of class class, the
// header row left out.
func cells(doc *html.Node, class string) []string {
	var rows []string
	visit(doc, func(n *html.Node) {
		if n.Data != "table" || !strings.Contains(" "+attr(n, "class")+" ", " "+class+" ") {
			return
		}
		visit(n, func(tr *html.Node) {
			if tr.Data != "tr" {
				return
			}
			var c []string
			for td := tr.FirstChild; td != nil; td = td.NextSibling {
				if td.Type == html.ElementNode && td.Data == "td" {
					c = append(c, text(td))
				}
			}
			if len(c) > 0 {
				rows = append(rows, strings.Join(c, " | "))
			}
		})
	})
	return rows
}

// The landing page counts a destination traced ok on an unhealthy path
// as unhealthy, not ok (it said "N of N ok" while ibtracer_path_healthy
// was 0), shows each row's path health, and lists the suspected links
// and the unhealthy links by name, each with a link to the destinations
// crossing it.
func TestLandingShowsPathAndLinkHealth(t *testing.T) {
	e := healthPagesExporter(t)
	mux := servedMux(e)
	w := get(t, mux, "/", "text/html")
	doc := parse(t, w.Body.String())
	all := text(doc)
	if !strings.Contains(all, "Destinations (1 of 5 ok, 1 on an unhealthy path, 2 failing, 1 not traced yet)") {
		t.Errorf("the destinations' count: want 1 of 5 ok, 1 unhealthy, 2 failing, 1 not traced:\n%s", all)
	}
	rows := map[string]string{}
	for _, r := range cells(doc, "status") {
		name, _, _ := strings.Cut(r, " | ")
		rows[name] = r
	}
	for name, want := range map[string]string{
		"db01": "db01 | lid 9 | mismatch | unhealthy: 1 degraded link(s) | 2",
		"web":  "web | lid 12 | ok | ok | 2",
		"slow": "slow | lid 13 | ok | unhealthy: 1 degraded link(s) | 2",
		"gone": "gone | lid 11 | unreachable (timeout) | ok as far as traced (1 link(s)) | 1",
		"idle": "idle | lid 10 | not traced yet | none |",
	} {
		if !strings.HasPrefix(rows[name], want) {
			t.Errorf("row %s: %q, want it to start %q", name, rows[name], want)
		}
	}
	unhealthy := cells(doc, "unhealthy")
	wantUnhealthy := []string{
		`leaf-b {0x0000000000000021}[7] → "db01 HCA-1" {0x0000000000000030}[1] | width_degraded | 4X could be 12X | 1 | crossing it`,
		`leaf-a-site {0x0000000000000020}[5] → "slow01 HCA-1" {0x0000000000000041}[1] | speed_degraded | 4X could be 12X | 1 | crossing it`,
	}
	if fmt.Sprint(unhealthy) != fmt.Sprint(wantUnhealthy) {
		t.Errorf("unhealthy links:\n%q\nwant\n%q", unhealthy, wantUnhealthy)
	}
	suspects := cells(doc, "suspects")
	if len(suspects) == 0 {
		t.Fatalf("no suspected link:\n%s", all)
	}
	// gone's last good path left leaf-a by port 6 and its trace breaks
	// there: that link is suspected, both ends by name.
	found := false
	for _, r := range suspects {
		if strings.HasPrefix(r, `leaf-a-site {0x0000000000000020}[6] — "gone01 HCA-1" {0x0000000000000050}[1] | 1 |`) {
			found = true
		}
	}
	if !found {
		t.Errorf("suspected links %q: want leaf-a-site:6 - gone01 with 1 bad path", suspects)
	}
	// Every "crossing it" link answers with the destinations crossing
	// the link.
	var hrefs []string
	visit(doc, func(n *html.Node) {
		if n.Data == "a" && text(n) == "crossing it" {
			hrefs = append(hrefs, attr(n, "href"))
		}
	})
	for _, h := range hrefs {
		r := get(t, mux, "/"+h, "")
		var got []pages.TraceView
		if err := json.Unmarshal(r.Body.Bytes(), &got); err != nil || r.Code != 200 || len(got) == 0 {
			t.Errorf("%s: %d %v, %d destinations", h, r.Code, err, len(got))
		}
	}
	if len(hrefs) < 3 {
		t.Errorf("links to the crossing destinations: %v", hrefs)
	}
}

// /traces draws the link health on the latest path, marks where a failed
// trace broke and shows its last good path beside it; with ?link= it says
// so and outlines the crossing.
func TestTracesShowBreakHealthAndFilter(t *testing.T) {
	e := healthPagesExporter(t)
	h := e.TracesHandler()
	doc := parse(t, get(t, h, "/traces?destination=gone", "text/html").Body.String())
	var latest, good []string
	visit(doc, func(n *html.Node) {
		if n.Data != "div" {
			return
		}
		var into *[]string
		switch attr(n, "class") {
		case "latest":
			into = &latest
		case "last-good":
			into = &good
		default:
			return
		}
		visit(n, func(td *html.Node) {
			if td.Data == "td" {
				*into = append(*into, attr(td, "class")+": "+text(td))
			}
		})
	})
	wantLatest := []string{
		"hop v-source: hop 0 · ca me 0x0000000000000010 LID 1 · in 0 · out 1 source",
		"arrow l-ok: →",
		"hop v-validated: hop 1 · switch leaf-a-site 0x0000000000000020 LID 2 · in 1 · out 6 validated by agent expected in 0, arrived in 0",
		"arrow l-broken: → ✗",
		"hop break: broke here stopped after hop 1, leaving by port 6 unreachable (timeout)",
	}
	if fmt.Sprint(latest) != fmt.Sprint(wantLatest) {
		t.Errorf("gone's latest trace:\n%q\nwant\n%q", latest, wantLatest)
	}
	if len(good) != 5 || !strings.Contains(good[4], "gone01 HCA-1") {
		t.Errorf("gone's last good path beside it: %q", good)
	}
	w := get(t, h, "/traces?destination=gone", "")
	var v []pages.TraceView
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil || len(v) != 1 || v[0].LastGoodPath == nil || len(v[0].LastGoodPath.Hops) != 3 {
		t.Errorf("JSON: last_good_path: %s", w.Body.String())
	}

	// db01's latest trace mismatched: its last good path is the one
	// before, through leaf-a.
	w = get(t, h, "/traces?destination=db01", "")
	v = nil
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil || len(v) != 1 || v[0].LastGoodPath == nil || v[0].LastGoodPath.Hops[1].NodeDesc != "leaf-a" {
		t.Errorf("JSON: db01's last_good_path: %s", w.Body.String())
	}

	// db01's latest path: its unhealthy link is red with its verdict;
	// the path health line names the link by name.
	doc = parse(t, get(t, h, "/traces?destination=db01", "text/html").Body.String())
	all := text(doc)
	if !strings.Contains(all, `Path health: unhealthy: 1 degraded link(s); link 2 leaf-b {0x0000000000000021}[7] → "db01 HCA-1" {0x0000000000000030}[1]: width_degraded, 4X could be 12X`) {
		t.Errorf("db01's path health line:\n%s", all)
	}
	var arrows []string
	visit(doc, func(n *html.Node) {
		if n.Data == "td" && strings.HasPrefix(attr(n, "class"), "arrow") {
			arrows = append(arrows, attr(n, "class")+": "+text(n)+" ("+attr(n, "title")+")")
		}
	})
	if len(arrows) < 2 || arrows[1] != `arrow l-bad: → ✗ width_degraded (leaf-b {0x0000000000000021}[7] → "db01 HCA-1" {0x0000000000000030}[1]: width_degraded: 4X could be 12X)` {
		t.Errorf("db01's arrows: %q", arrows)
	}

	// The filter: shown, and the hops it touches outlined, in every path
	// drawn (gone: the link it broke on).
	doc = parse(t, get(t, h, "/traces?link=leaf-a-site:6", "text/html").Body.String())
	all = text(doc)
	if !strings.Contains(all, "Filtered: destinations whose path crosses the link at leaf-a-site {0x0000000000000020}:6") {
		t.Errorf("the filter is not shown:\n%s", all)
	}
	var crossed []string
	visit(doc, func(n *html.Node) {
		if n.Data == "td" && strings.Contains(" "+attr(n, "class")+" ", " cross ") {
			crossed = append(crossed, attr(n, "class")+": "+text(n))
		}
	})
	wantCrossed := []string{
		"hop v-validated cross: hop 1 · switch leaf-a-site 0x0000000000000020 LID 2 · in 1 · out 6 validated by agent expected in 0, arrived in 0",
		"arrow l-broken cross: → ✗",
		"hop v-validated cross: hop 1 · switch leaf-a-site 0x0000000000000020 LID 2 · in 1 · out 6 validated by agent expected in 0, arrived in 0",
		"arrow l-none cross: →",
		"hop v-validated cross: hop 2 · ca gone01 HCA-1 0x0000000000000050 LID 11 · in 1 · out 0 validated by agent expected in 0, arrived in 0",
	}
	if fmt.Sprint(crossed) != fmt.Sprint(wantCrossed) {
		t.Errorf("outlined:\n%q\nwant\n%q", crossed, wantCrossed)
	}
	if strings.Contains(all, "db01") || !strings.Contains(all, "gone") {
		t.Errorf("?link=leaf-a-site:6 lists another destination than gone:\n%s", all)
	}
}
