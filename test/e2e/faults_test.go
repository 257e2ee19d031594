package e2e

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
)

// The fault matrix: one exporter binary on ibsim + OpenSM (two-switch.net,
// OpenSM on a host of its own sweeping every second, our agents on host2
// and host4, the exporter on host1 hosting its own), taken through one
// fault after another while a background scraper checks that every scrape
// of /metrics answers within a second. Each scenario logs its detection
// and recovery times and the counters that moved.

const (
	// ibsimMaxClients is how many clients ibsim serves (ibmad/ibsim/doc.go).
	ibsimMaxClients = 10
	matrixInterval  = time.Second
	// maxScrape is the longest a scrape may take, at any moment.
	maxScrape = time.Second
	// Agent rate limit of the exporter under test (per source LID).
	floodRate, floodBurst = 100, 200
)

// matrix is the fabric and the exporter the scenarios share.
type matrix struct {
	fab  *ibsimtest.Fabric
	opts ibsimtest.Options
	p    *exporterProc
	lids map[string]uint16
	// guids are the port GUIDs of the single-port hosts.
	guids map[string]ibmad.GUID
	// traced are the LID destinations of the running configuration.
	traced []string
}

// config is the exporter's configuration with dests (name: address lines)
// in the order given.
func (m *matrix) config(dests ...string) string {
	var b strings.Builder
	// share_validation and resolve_ttl 0: every trace asks every hop and
	// the SA, so what the scenarios measure is the exporter's reaction, not
	// the documented reuse windows (config.example.yml).
	fmt.Fprintf(&b, "interval: %s\ntimeout: 200ms\nretries: 1\nshare_validation: 0s\nresolve_ttl: 0s\nagent:\n  rate_per_source: %d\n  burst: %d\ndestinations:\n",
		matrixInterval, floodRate, floodBurst)
	for _, d := range dests {
		fmt.Fprintf(&b, "  - {%s}\n", d)
	}
	return b.String()
}

func (m *matrix) lidDest(name, node string) string {
	return fmt.Sprintf("name: %s, lid: %d", name, m.lids[node])
}

// baseDests are traced throughout: far and near by LID (far crosses the
// sw1-sw2 links), byguid, bygid and bynode through the SA.
func (m *matrix) baseDests() []string {
	return []string{m.lidDest("far", "host2"), m.lidDest("near", "host3"),
		fmt.Sprintf("name: byguid, guid: %q", m.guids["host4"].String()),
		fmt.Sprintf("name: bygid, gid: %q", ibmad.MakeGID(ibmad.DefaultGIDPrefix, m.guids["host2"]).String()),
		`name: bynode, node: "host3"`}
}

var (
	lidDests = []string{"far", "near"}
	saDests  = []string{"byguid", "bygid", "bynode"}
)

func TestFaultMatrix(t *testing.T) {
	skipShort(t)
	start := time.Now()
	m := &matrix{opts: ibsimtest.Options{KeepSM: true, SMHost: true, SweepSeconds: 1, Lifetime: 4 * time.Minute}}
	m.fab = ibsimtest.Start(t, filepath.Join(topoDir, "two-switch.net"), m.opts)
	m.lids = lidsOf(t, m.fab, "host1")
	m.guids = map[string]ibmad.GUID{}
	for _, h := range []string{"host2", "host4"} {
		tr := m.fab.Dial(h, false)
		pa, err := tr.Port()
		if err != nil {
			t.Fatal(err)
		}
		tr.Close()
		m.guids[h] = pa.PortGUID
	}
	startAgents(t, m.fab, "host2", "host4")
	m.traced = lidDests
	m.p = startIbsimExporter(t, m.fab, "host1", m.config(m.baseDests()...))
	m.p.waitFor(30*time.Second, "first traces", allTraced(append(lidDests, saDests...)...))
	sc := startScraper(m.p)
	t.Logf("setup: %v", time.Since(start).Round(time.Millisecond))

	t.Run("LinkFlap", m.linkFlap)
	t.Run("OpenSMRestart", m.smRestart)
	t.Run("AgentFlood", m.flood)
	t.Run("ReloadStorm", m.reloadStorm)
	t.Run("IbsimRestart", m.ibsimRestart)

	n, maxLat, problems := sc.stop()
	t.Logf("background scraper: %d scrapes, max latency %v; whole matrix %v", n, maxLat.Round(time.Millisecond),
		time.Since(start).Round(time.Millisecond))
	for _, pr := range problems {
		t.Errorf("scrape: %s", pr)
	}
	if strings.Contains(m.p.Logs(), "panic") {
		t.Errorf("the exporter logged a panic")
	}
}

// scraper scrapes /metrics in the background and records every scrape that
// failed or took longer than maxScrape.
type scraper struct {
	p        *exporterProc
	quit     chan struct{}
	done     chan struct{}
	mu       sync.Mutex
	n        int
	max      time.Duration
	problems []string
}

func startScraper(p *exporterProc) *scraper {
	s := &scraper{p: p, quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-s.quit:
				return
			case <-tick.C:
			}
			t0 := time.Now()
			code, body := p.get("/metrics")
			d := time.Since(t0)
			s.mu.Lock()
			s.n++
			s.max = max(s.max, d)
			if code != 200 || d > maxScrape {
				if len(body) > 200 {
					body = body[:200]
				}
				s.problems = append(s.problems, fmt.Sprintf("at %s: HTTP %d after %v %s", t0.Format("15:04:05.000"), code, d, body))
			}
			s.mu.Unlock()
		}
	}()
	return s
}

func (s *scraper) stop() (int, time.Duration, []string) {
	close(s.quit)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n, s.max, s.problems
}

// samples parses a /metrics body into series -> value.
func samples(body string) map[string]float64 {
	out := map[string]float64{}
	for _, l := range strings.Split(body, "\n") {
		if l == "" || l[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(l, ' ')
		if i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(l[i+1:], 64); err == nil {
			out[l[:i]] = v
		}
	}
	return out
}

// moved lists the ibtracer_ counters that changed between two bodies.
func moved(before, after string) string {
	b, a := samples(before), samples(after)
	var out []string
	for k, v := range a {
		if strings.HasPrefix(k, "ibtracer_") && strings.Contains(k, "_total") && !strings.Contains(k, "_bucket") && v != b[k] {
			out = append(out, fmt.Sprintf("%s %+g", k, v-b[k]))
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n  ")
}

func metric(body, name string, labels ...string) float64 {
	series := name
	if len(labels) > 0 {
		var l []string
		for i := 0; i+1 < len(labels); i += 2 {
			l = append(l, fmt.Sprintf("%s=%q", labels[i], labels[i+1]))
		}
		series += "{" + strings.Join(l, ",") + "}"
	}
	v, _ := value(body, series)
	return v
}

func dmetric(body, name, dest string, labels ...string) float64 {
	return metric(body, name, append([]string{"dest", dest}, labels...)...)
}

func lastTrace(body, dest string) time.Time {
	ts := dmetric(body, "ibtracer_last_trace_timestamp_seconds", dest)
	return time.Unix(0, int64(ts*1e9))
}

// tracedOKSince: every dest's last trace succeeded and ended after t0.
func tracedOKSince(t0 time.Time, dests ...string) func(string) bool {
	return func(b string) bool {
		for _, d := range dests {
			if dmetric(b, "ibtracer_trace_success", d) != 1 || lastTrace(b, d).Before(t0) {
				return false
			}
		}
		return true
	}
}

// check waits up to d for cond and reports a failure (without stopping the
// scenario) if it does not hold; it returns the last body, the time waited
// and whether cond held.
func (m *matrix) check(t *testing.T, d time.Duration, what string, cond func(string) bool) (string, time.Duration, bool) {
	t.Helper()
	b, el, ok := m.p.await(d, cond)
	if !ok {
		t.Errorf("waited %v for %s; last /metrics, non-zero samples:\n%s", d, what, summary(b))
	}
	return b, el, ok
}

// eachDest waits up to d for cond to hold of every destination in dests
// and returns, per destination, how long after since the trace that made
// it hold ended (by the exporter's clock); it reports those for which it
// never held.
func (m *matrix) eachDest(t *testing.T, since time.Time, d time.Duration, what string, dests []string, cond func(body, dest string) bool) (string, map[string]time.Duration) {
	t.Helper()
	took := map[string]time.Duration{}
	b, _, _ := m.p.await(d, func(b string) bool {
		for _, dest := range dests {
			if _, done := took[dest]; !done && cond(b, dest) {
				took[dest] = lastTrace(b, dest).Sub(since).Round(time.Millisecond)
			}
		}
		return len(took) == len(dests)
	})
	var missing []string
	for _, dest := range dests {
		if _, ok := took[dest]; !ok {
			missing = append(missing, dest)
		}
	}
	if len(missing) > 0 {
		t.Errorf("waited %v for %s: never for %v; last /metrics, non-zero samples:\n%s", d, what, missing, summary(b))
	}
	return b, took
}

// summary is the non-zero ibtracer_ samples of a /metrics body, without
// histograms and the per-hop series.
func summary(body string) string {
	var out []string
	for _, l := range strings.Split(grepMetrics(body, "ibtracer_"), "\n") {
		if strings.HasSuffix(l, " 0") || strings.HasPrefix(l, "ibtracer_hop_") || strings.HasPrefix(l, "ibtracer_destination_") ||
			strings.Contains(l, "_sum") || strings.Contains(l, "_count") {
			continue
		}
		out = append(out, "  "+l)
	}
	return strings.Join(out, "\n")
}

// linkFlap: Unlink a cable on far's path on ibsim's console: OpenSM routes
// around it, the path change is counted and far traces again within two
// intervals of OpenSM's next sweep; Link it again: the same.
func (m *matrix) linkFlap(t *testing.T) {
	p := m.p
	port := p.outPort("far", "sw1")
	if port != 3 && port != 5 {
		t.Fatalf("path to host2 leaves sw1 by port %d, want 3 or 5", port)
	}
	sweep := time.Duration(m.opts.SweepSeconds) * time.Second
	for _, cmd := range []string{fmt.Sprintf(`Unlink "sw1"[%d]`, port), fmt.Sprintf(`Link "sw1"[%d] "sw2"[%d]`, port, port)} {
		_, before := p.get("/metrics")
		changes := dmetric(before, "ibtracer_path_changes_total", "far")
		t0 := time.Now()
		if err := m.fab.Console(cmd); err != nil {
			t.Fatal(err)
		}
		b, det, ok := m.check(t, 30*time.Second, "a path change of far after "+cmd, func(b string) bool {
			return dmetric(b, "ibtracer_path_changes_total", "far") > changes
		})
		if !ok {
			continue
		}
		changed := time.Unix(0, int64(dmetric(b, "ibtracer_path_last_change_timestamp_seconds", "far")*1e9))
		b, _, ok = m.check(t, 10*time.Second, "far traced successfully after "+cmd, tracedOKSince(t0, "far"))
		if !ok {
			continue
		}
		// The first successful trace after the cable event, by the
		// exporter's own clock.
		rec := lastTrace(b, "far").Sub(t0)
		t.Logf("%s: path change counted after %v (change seen by a trace at +%v); far traced OK again at +%v; "+
			"near changes %v; counters moved:\n  %s", cmd, det.Round(time.Millisecond), changed.Sub(t0).Round(time.Millisecond),
			rec.Round(time.Millisecond), dmetric(b, "ibtracer_path_changes_total", "near"), moved(before, b))
		if budget := 2*matrixInterval + sweep; rec > budget {
			t.Errorf("%s: far recovered %v after the event, want within 2 intervals after OpenSM's sweep (%v)", cmd, rec, budget)
		}
		if n := dmetric(b, "ibtracer_path_changes_total", "near"); n != 0 {
			t.Errorf("near (not on the flapped link) counted %v path changes", n)
		}
	}
}

// smRestart: OpenSM killed: destinations resolved through the SA (GUID,
// GID, node) fail with sa_error while the LID destinations keep tracing;
// OpenSM restarted: all trace again within two intervals.
func (m *matrix) smRestart(t *testing.T) {
	p := m.p
	_, before := p.get("/metrics")
	t0 := time.Now()
	m.fab.KillSM()
	down, took := m.eachDest(t, t0, 10*matrixInterval, "an sa_error failure after OpenSM's death", saDests, func(b, dest string) bool {
		return dmetric(b, "ibtracer_trace_failures_total", dest, "reason", "sa_error") >
			dmetric(before, "ibtracer_trace_failures_total", dest, "reason", "sa_error") && lastTrace(b, dest).After(t0)
	})
	t.Logf("OpenSM killed: first sa_error failure after %v", took)
	// The LID destinations kept working while the SA was gone.
	if _, _, ok := m.check(t, 3*matrixInterval, "far and near traced OK with OpenSM down", tracedOKSince(t0, lidDests...)); !ok {
		t.Errorf("LID destinations suffered from OpenSM's death")
	}
	t1 := time.Now()
	m.fab.StartSM()
	ready := time.Now()
	b, took := m.eachDest(t, ready, 10*matrixInterval, "a successful trace after OpenSM restarted", append(lidDests, saDests...),
		func(b, dest string) bool { return tracedOKSince(ready, dest)(b) })
	for dest, rec := range took {
		if rec > 2*matrixInterval {
			t.Errorf("%s traced OK %v after OpenSM's sweep, want within 2 intervals", dest, rec)
		}
	}
	t.Logf("OpenSM restarted and swept in %v; first successful trace after its sweep: %v; counters moved while it was down:\n  %s\nsince:\n  %s",
		ready.Sub(t1).Round(time.Millisecond), took, moved(before, down), moved(down, b))
}

// reloadStorm: 50 SIGHUPs in a second, good and bad files alternating, the
// last one good: the last good configuration runs (its new destination is
// traced, the removed ones are gone) and nothing wedges.
func (m *matrix) reloadStorm(t *testing.T) {
	p := m.p
	_, before := p.get("/metrics")
	base := m.baseDests()
	good := []string{
		m.config(append(base[:1:1], append(base[2:], m.lidDest("storm", "host3"))...)...), // near -> storm
		m.config(append(base[:1:1], append(base[2:], m.lidDest("final", "host4"))...)...), // near, storm -> final
	}
	bad := []string{
		strings.Replace(good[0], "interval: 1s", "interval: -1s", 1),
		good[0] + "  - {name: broken, lid: 50000}\n",
		"interval: [\n",
	}
	t0 := time.Now()
	const n = 50
	for i := range n {
		switch {
		case i == n-1:
			p.writeConfig(good[1])
		case i%2 == 0:
			p.writeConfig(bad[i/2%len(bad)])
		default:
			p.writeConfig(good[0])
		}
		p.sighup()
		time.Sleep(time.Second / n) // the storm's pace, not a synchronisation
	}
	sent := time.Since(t0)
	dests := append(base[:1:1], base[2:]...)
	names := []string{"final"}
	for _, d := range dests {
		names = append(names, strings.TrimSuffix(strings.Fields(d)[1], ","))
	}
	_, det, ok := m.check(t, 10*matrixInterval, "the last good configuration running", func(b string) bool {
		_, near := value(b, `ibtracer_trace_success{dest="near"}`)
		_, storm := value(b, `ibtracer_trace_success{dest="storm"}`)
		return metric(b, "ibtracer_config_last_reload_successful") == 1 && !near && !storm && allTraced("final")(b)
	})
	if !ok {
		return
	}
	// Nothing wedged: every destination of the running configuration
	// traces again after the storm, and keeps doing so.
	after := time.Now()
	b2, rec, ok := m.check(t, 3*matrixInterval, "every destination traced after the storm", func(b string) bool {
		for _, d := range names {
			if !lastTrace(b, d).After(after) {
				return false
			}
		}
		return true
	})
	m.traced = []string{"far", "final"}
	if ok {
		t.Logf("reload storm: %d SIGHUPs in %v; last good configuration running %v after the last; every destination traced again "+
			"within %v; counters moved:\n  %s", n, sent.Round(time.Millisecond), det.Round(time.Millisecond), rec.Round(time.Millisecond), moved(before, b2))
	}
}

// ibsimRestart: ibsim killed under the exporter: device_up drops to 0
// within two intervals, the exporter keeps serving and nothing panics;
// ibsim started again under the same socket name: the exporter reconnects
// by itself, device_up is 1 and the traces resume.
func (m *matrix) ibsimRestart(t *testing.T) {
	p := m.p
	_, before := p.get("/metrics")
	t0 := time.Now()
	m.fab.Kill()
	b, det, ok := m.check(t, 2*matrixInterval+500*time.Millisecond, "device_up 0 within 2 intervals of ibsim's death", func(b string) bool {
		v, ok := value(b, "ibtracer_device_up")
		return ok && v == 0
	})
	if ok {
		t.Logf("ibsim killed: device_up 0 after %v", det.Round(time.Millisecond))
	}
	if code, _ := p.get("/-/healthy"); code != 200 {
		t.Errorf("/-/healthy: %d with ibsim gone", code)
	}
	down := b
	m.fab.Resume()
	startAgents(t, m.fab, "host2", "host4")
	ready := time.Now()
	t.Logf("ibsim and OpenSM back %v after the kill", ready.Sub(t0).Round(time.Millisecond))
	_, up, ok := m.check(t, 20*time.Second, "device_up 1 after ibsim restarted", func(b string) bool {
		return metric(b, "ibtracer_device_up") == 1
	})
	if !ok {
		return
	}
	b, took := m.eachDest(t, ready, 20*time.Second, "a successful trace after ibsim restarted", m.traced,
		func(b, dest string) bool { return tracedOKSince(ready, dest)(b) })
	t.Logf("ibsim restarted: device_up 1 after %v, first successful traces after %v; counters moved while down:\n  %s\nsince:\n  %s",
		up.Round(time.Millisecond), took, moved(before, down), moved(down, b))
	if strings.Contains(p.Logs(), "panic") {
		t.Errorf("the exporter logged a panic")
	}
}
