package collector

import (
	"bytes"
	"fmt"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ibtracer/ibtracer_exporter/collector/fleet"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// maxSeriesPerDestination is the series budget of a destination without
// per-hop series (docs/metrics.md, "Series budget").
const maxSeriesPerDestination = 15

// recordMix gives the destinations a realistic history: most traced fine
// twice, every tenth failed once (timeout) and then recovered, every
// twenty-fifth is failing now (no route, then port down).
func recordMix(dests []*destState) {
	start := time.Unix(1800000000, 0)
	for i, s := range dests {
		hops := []trace.Hop{{Hop: 0, NodeGUID: 0x10, NodeType: ibmad.NodeTypeCA, Agent: trace.AgentSource}}
		for h := 1; h <= 4; h++ {
			hops = append(hops, trace.Hop{Hop: h, NodeGUID: ibmad.GUID(0x1000 + h*97 + i), NodeType: ibmad.NodeTypeSwitch,
				NodeDesc: fmt.Sprintf("n%d-%d", h, i), LID: uint16(h + i), InPort: 1, OutPort: 2, Agent: trace.AgentValidated,
				AgentRTT: 4 * time.Microsecond})
		}
		ok := &trace.Result{Status: trace.StatusOK, Start: start, Duration: time.Millisecond, MADs: 9, Hops: hops}
		switch {
		case i%25 == 0:
			s.record(&trace.Result{Status: trace.StatusUnreachable, Reason: trace.ReasonNoRoute, Start: start, Hops: hops[:2]})
			s.record(&trace.Result{Status: trace.StatusUnreachable, Reason: trace.ReasonPortDown, Start: start, Hops: hops[:2]})
		case i%10 == 0:
			s.record(&trace.Result{Status: trace.StatusUnreachable, Reason: trace.ReasonTimeout, Start: start, Hops: hops[:3]})
			s.record(ok)
		default:
			s.record(ok)
			s.record(ok)
		}
	}
}

var destLabelRe = regexp.MustCompile(`dest="([^"]*)"`)

// seriesCount scrapes e and returns the series of each destination and
// the series with no destination label, and the exposition text.
func seriesCount(t *testing.T, e *Exporter) (perDest map[string]int, fixed int, text []byte) {
	t.Helper()
	h := MetricsHandler(NewRegistry(e), 1, log.NewNopLogger())
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if w.Code != http.StatusOK {
		t.Fatalf("status %d", w.Code)
	}
	perDest = map[string]int{}
	for _, l := range strings.Split(w.Body.String(), "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if m := destLabelRe.FindStringSubmatch(l); m != nil {
			perDest[m[1]]++
		} else {
			fixed++
		}
	}
	return perDest, fixed, w.Body.Bytes()
}

// promtoolCheck runs `promtool check metrics` on an exposition.
func promtoolCheck(t *testing.T, text []byte) {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed")
	}
	cmd := exec.Command(p, "check", "metrics")
	cmd.Stdin = bytes.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) != 0 {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

// 1,000 destinations without per-hop series (what discovered ones get by
// default): at most 15 series each, plus a fixed number that does not
// grow with the destinations.
func TestSeriesBudgetExplicitNoHops(t *testing.T) {
	build := func(n int) *Exporter {
		var b strings.Builder
		b.WriteString("interval: 1h\ndestinations:\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "  - {name: d%04d, lid: %d, hops: false}\n", i, i+1)
		}
		e := New(log.NewNopLogger(), "")
		e.Apply(mustConfig(t, b.String()))
		recordMix(e.destinations())
		return e
	}
	checkBudget(t, build)
}

// checkBudget checks the budget on exporters of 1,000 and 100
// destinations built by build: per destination, and that the fixed part
// is the same at both sizes.
func checkBudget(t *testing.T, build func(n int) *Exporter) {
	t.Helper()
	e := build(1000)
	defer e.Stop()
	perDest, fixed, text := seriesCount(t, e)
	if len(perDest) != 1000 {
		t.Fatalf("%d destinations in the scrape, want 1000", len(perDest))
	}
	most, total := 0, 0
	for _, n := range perDest {
		total += n
		if n > most {
			most = n
		}
	}
	t.Logf("1,000 destinations: %d series (%d fixed, %.1f per destination on average, %d at most), %d bytes",
		fixed+total, fixed, float64(total)/1000, most, len(text))
	if most > maxSeriesPerDestination {
		t.Fatalf("a destination has %d series, want at most %d", most, maxSeriesPerDestination)
	}
	small := build(100)
	defer small.Stop()
	if _, f, _ := seriesCount(t, small); f != fixed {
		t.Fatalf("fixed series: %d at 100 destinations, %d at 1,000: they grow with the destinations", f, fixed)
	}
	promtoolCheck(t, text)
}

// The same budget for 1,000 discovered destinations (discover: all, hop
// series off by default).
func TestSeriesBudgetDiscovered(t *testing.T) {
	build := func(n int) *Exporter {
		ports := make([]fleet.InventoryPort, n)
		for i := range ports {
			ports[i] = caPort(uint64(0x10000+16*i), 1, uint16(100+i), fmt.Sprintf("node%04d HCA-1", i))
		}
		fc := newFakeClock(time.Unix(1800000000, 0))
		e := New(log.NewNopLogger(), "seed")
		e.clock = fc
		e.setInventory(&fakeInventory{ports: ports})
		e.Apply(mustConfig(t, "interval: 1h\ndiscover:\n  - all: true\n"))
		deadline := time.Now().Add(60 * time.Second)
		for len(e.destinations()) != n {
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d destinations discovered", len(e.destinations()), n)
			}
			time.Sleep(time.Millisecond)
		}
		recordMix(e.destinations())
		return e
	}
	checkBudget(t, build)
}

// A destination's interval is a series of its own only when it differs
// from the configuration's, which ibtracer_interval_seconds carries once:
// at 10,000 destinations the same number 10,000 times was a tenth of
// /metrics.
func TestIntervalSeries(t *testing.T) {
	e := New(log.NewNopLogger(), "")
	defer e.Stop()
	e.Apply(mustConfig(t, "interval: 1h\ndestinations:\n  - {name: a, lid: 1}\n  - {name: b, lid: 2, interval: 30s}\n  - {name: c, lid: 3, interval: 1h}\n"))
	want := `# HELP ibtracer_destination_interval_seconds Trace interval of the destination, when not the configuration's (ibtracer_interval_seconds).
# TYPE ibtracer_destination_interval_seconds gauge
ibtracer_destination_interval_seconds{dest="b"} 30
# HELP ibtracer_interval_seconds The configuration's trace interval: every destination's that has no ibtracer_destination_interval_seconds of its own.
# TYPE ibtracer_interval_seconds gauge
ibtracer_interval_seconds 3600
`
	if err := testutil.CollectAndCompare(e, strings.NewReader(want), "ibtracer_interval_seconds", "ibtracer_destination_interval_seconds"); err != nil {
		t.Fatal(err)
	}
}

// The /metrics text of scripts/bench-exporter.sh's setup (10,000
// destinations named d0..d9999 at LIDs from 194, hop series off, every
// destination traced once over a 5-hop path with an agent at each hop)
// is at most 5 MB (issue "Fleet scale"; docs/metrics.md, "Series
// budget"). Values vary as real traces' do: durations, agent round trips
// and end times are drawn at random, with a fixed seed.
func TestScrapeTextAtBenchScale(t *testing.T) {
	const n, limit = 10000, 5000000
	e := benchScaleExporter(t)
	perDest, fixed, text := seriesCount(t, e)
	if len(perDest) != n {
		t.Fatalf("%d destinations in the scrape, want %d", len(perDest), n)
	}
	t.Logf("%d destinations: %d bytes of text, %d series (%d fixed)", n, len(text), fixed+n*perDest["d1234"], fixed)
	if len(text) > limit {
		t.Errorf("/metrics is %d bytes of text at %d destinations, want at most %d", len(text), n, limit)
	}
}

// benchScaleExporter is the exporter of TestScrapeTextAtBenchScale.
func benchScaleExporter(t *testing.T) *Exporter {
	t.Helper()
	const n = 10000
	var b strings.Builder
	b.WriteString("interval: 1m\ndestinations:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  - {name: d%d, lid: %d, hops: false}\n", i, 194+i)
	}
	e := New(log.NewNopLogger(), "")
	t.Cleanup(e.Stop)
	e.Apply(mustConfig(t, b.String()))
	rnd := rand.New(rand.NewSource(1))
	for i, s := range e.destinations() {
		hops := []trace.Hop{{Hop: 0, NodeGUID: 0x10, NodeType: ibmad.NodeTypeCA, Agent: trace.AgentSource}}
		for h := 1; h <= 5; h++ {
			hops = append(hops, trace.Hop{Hop: h, NodeGUID: ibmad.GUID(0x1000 + h*97 + i), NodeType: ibmad.NodeTypeSwitch,
				LID: uint16(h + i), InPort: 1, OutPort: 2, Agent: trace.AgentValidated,
				AgentRTT: time.Duration(3000 + rnd.Intn(40000))})
		}
		s.record(&trace.Result{Status: trace.StatusOK, Start: time.Unix(1795378698, int64(rnd.Intn(1e9))),
			Duration: time.Duration(100000 + rnd.Intn(2000000)), MADs: 1, Hops: hops})
	}
	return e
}
