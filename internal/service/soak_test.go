//go:build soak

package service

// The in-process soak (not in CI; scripts/soak.sh is the one for the
// built binary): the service on the built-in simulated fabric with the
// chaos schedule, as `--ib.transport=sim --sim.faults` runs it, 200
// destinations at 1 s, a registry gather every 30 s as a scrape would.
// Every 30 s, after a forced GC, it logs the live heap and the
// goroutines; at the times SOAK_PROFILES lists it writes heap profiles to
// SOAK_PROFILE_DIR, to compare with `go tool pprof -base`:
//
//	SOAK_DURATION=10m SOAK_PROFILES=3m,9m SOAK_PROFILE_DIR=/tmp/soak \
//	  go test -tags soak -run TestSoakHeap -timeout 30m -v ./internal/service/

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/collector"
	"github.com/ibtracer/ibtracer_exporter/internal/ibopen"
	"github.com/prometheus/client_golang/prometheus"
)

// A fine sampling rate, so that heap profiles taken minutes apart can be
// compared (the default samples one allocation per 512 KiB).
func init() {
	runtime.MemProfileRate = 4096
	if v, err := strconv.Atoi(os.Getenv("SOAK_MEMPROFILERATE")); err == nil && v > 0 {
		runtime.MemProfileRate = v
	}
}

func soakEnv(t *testing.T, key, def string) string {
	t.Helper()
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// runSoakService runs the service with configuration body on the fabric
// ib (with the chaos schedule when faults) until the test ends, and
// returns its registry, the Go and process collectors included.
func runSoakService(t *testing.T, body string, faults bool, ib ibopen.Config) *prometheus.Registry {
	t.Helper()
	cfgFile := filepath.Join(t.TempDir(), "soak.yml")
	writeConfig(t, cfgFile, body)
	s, err := New(Options{ConfigFile: cfgFile, HostAgent: true, SimFaults: faults, IB: ib})
	if err != nil {
		t.Fatal(err)
	}
	reg := collector.NewRegistry(s.Collectors()...).Registry
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return reg
}

func TestSoakHeap(t *testing.T) {
	dur, err := time.ParseDuration(soakEnv(t, "SOAK_DURATION", "10m"))
	if err != nil {
		t.Fatalf("SOAK_DURATION: %v", err)
	}
	var profiles []time.Duration
	for _, s := range strings.Split(soakEnv(t, "SOAK_PROFILES", "3m,9m"), ",") {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			t.Fatalf("SOAK_PROFILES: %v", err)
		}
		profiles = append(profiles, d)
	}
	dir := soakEnv(t, "SOAK_PROFILE_DIR", t.TempDir())

	var b strings.Builder
	b.WriteString("interval: 1s\ntimeout: 100ms\nretries: 1\nconcurrency: 16\ndestinations:\n")
	for i := 0; i < 200; i++ {
		lid := 1 + i%21
		if lid >= 7 {
			lid++
		}
		fmt.Fprintf(&b, "  - {name: d%d, lid: %d, labels: {rack: r%d}}\n", i, lid, i%8)
	}
	reg := runSoakService(t, b.String(), true, ibopen.Config{Transport: "sim", SimAgents: "all", SimSeed: 1})

	start := time.Now()
	tick := time.NewTicker(30 * time.Second)
	defer tick.Stop()
	t.Logf("t_s\theap_inuse_kib\theap_alloc_kib\theap_objects\tgoroutines\tnative_buckets\tmax_per_histogram\tmin_schema\tseries")
	for {
		now := time.Since(start)
		mfs, err := reg.Gather()
		if err != nil {
			t.Errorf("gather at %v: %v", now, err)
		}
		// The native histograms' populated buckets: each is a map entry
		// (twice: the hot and cold counts) that stays once created.
		buckets, most, schema, series := 0, 0, int32(8), 0
		for _, mf := range mfs {
			series += len(mf.GetMetric())
			for _, m := range mf.GetMetric() {
				h := m.GetHistogram()
				if h == nil || h.Schema == nil {
					continue
				}
				n := len(h.GetPositiveDelta()) + len(h.GetNegativeDelta())
				buckets, most, schema = buckets+n, max(most, n), min(schema, h.GetSchema())
			}
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		t.Logf("%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d", int(now.Seconds()+0.5), ms.HeapInuse>>10, ms.HeapAlloc>>10, ms.HeapObjects,
			runtime.NumGoroutine(), buckets, most, schema, series)
		for len(profiles) > 0 && now >= profiles[0]-15*time.Second {
			name := filepath.Join(dir, fmt.Sprintf("heap-%ds.pb.gz", int(now.Seconds()+0.5)))
			f, err := os.Create(name)
			if err != nil {
				t.Fatal(err)
			}
			if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
				t.Fatal(err)
			}
			f.Close()
			t.Logf("heap profile: %s", name)
			profiles = profiles[1:]
		}
		if now >= dur-15*time.Second {
			return
		}
		<-tick.C
	}
}
