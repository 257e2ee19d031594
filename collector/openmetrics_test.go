package collector

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibtracer/ibtracer_exporter/agent"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// The OpenMetrics exposition of /metrics, as the daemon builds it, names
// every metric family once: a gauge "x" next to a counter "x_total" (whose
// family is "x" in OpenMetrics) is a duplicate that strict parsers reject.
func TestOpenMetricsHasNoDuplicateFamilies(t *testing.T) {
	topo, _ := sim.FatTree2(1, 1, 2, 1)
	f, _ := sim.New(topo, sim.Options{})
	tr, err := f.Attach("H0-0", 0)
	if err != nil {
		t.Fatal(err)
	}
	rtt, observe := NewMADRTT()
	eng := ibmad.NewEngine(tr, ibmad.Options{RTTObserver: observe})
	defer eng.Close()
	ag, err := agent.New(eng, agent.Config{})
	if err != nil {
		t.Fatal(err)
	}
	e := New(log.NewNopLogger(), "seed")
	defer e.Stop()
	e.SetDevice(eng, ag, nil)
	e.Apply(mustConfig(t, "interval: 1h\ndestinations:\n  - {name: a, lid: 3, labels: {rack: r1}}\n"))
	e.dests.get("a").record(&trace.Result{Status: trace.StatusOK, Start: time.Now(), MADs: 5})
	reloadOK := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: namespace, Name: "config_last_reload_successful",
		Help: "1 if the last configuration reload succeeded."})
	reg := NewRegistry(e, rtt, reloadOK)

	srv := httptest.NewServer(MetricsHandler(reg, 1, log.NewNopLogger()))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set("Accept", "application/openmetrics-text; version=1.0.0; charset=utf-8")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/openmetrics-text") {
		t.Fatalf("Content-Type %q: not OpenMetrics", ct)
	}
	seen := map[string]string{}
	var dups []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	families, eof := 0, false
	for sc.Scan() {
		line := sc.Text()
		if line == "# EOF" {
			eof = true
		}
		if !strings.HasPrefix(line, "# TYPE ") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 4 {
			t.Fatalf("bad TYPE line %q", line)
		}
		families++
		if prev, ok := seen[fields[2]]; ok {
			dups = append(dups, fmt.Sprintf("%s (%s and %s)", fields[2], prev, fields[3]))
		}
		seen[fields[2]] = fields[3]
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if !eof || families < 40 {
		t.Fatalf("%d families, EOF %v: not the whole exposition", families, eof)
	}
	for _, want := range []string{"ibtracer_trace_mads", "ibtracer_device_up", "go_goroutines", "process_open_fds", "ibtracer_build_info",
		"ibtracer_last_trace_mads", "go_memstats_alloc_bytes", "go_gc_heap_allocs_bytes"} {
		if _, ok := seen[want]; !ok {
			t.Errorf("family %s missing", want)
		}
	}
	if len(dups) > 0 {
		t.Fatalf("duplicate metric families in the OpenMetrics exposition: %s", strings.Join(dups, ", "))
	}
}
