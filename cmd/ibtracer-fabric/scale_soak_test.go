//go:build soak

package main

// The capacity benchmark (scripts/bench-exporter.sh) with the exporter in
// this test process and the fabric in an ibtracer-fabric process, for a
// heap profile of the exporter alone (not in CI):
//
//	SCALE_PROFILE=/tmp/exporter.pb.gz go test -tags soak -run TestExporterHeapOverSocket -timeout 30m -v ./cmd/ibtracer-fabric/
//	go tool pprof -top -inuse_space /tmp/exporter.pb.gz

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/collector"
	"github.com/ibtracer/ibtracer_exporter/internal/ibopen"
	"github.com/ibtracer/ibtracer_exporter/internal/service"
)

func TestExporterHeapOverSocket(t *testing.T) {
	dir := t.TempDir()
	n := 10000
	var b strings.Builder
	b.WriteString("interval: 60s\ntimeout: 500ms\nretries: 1\nconcurrency: 32\ndestinations:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  - {name: d%d, lid: %d, hops: false}\n", i, 194+i)
	}
	cfg := filepath.Join(dir, "c.yml")
	write(t, cfg, b.String())

	bin := filepath.Join(dir, "ibtracer-fabric")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	sock := fmt.Sprintf("scaleheap%d", os.Getpid())
	t.Setenv("IBSIM_SOCKNAME", sock)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	fab := exec.CommandContext(ctx, bin, "--sim.fattree=128,64,80", "--sim.agents=all")
	stdout, err := fab.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := fab.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = fab.Process.Kill(); _ = fab.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ibtracer-fabric: serving") {
		t.Fatalf("fabric: %q %v", line, err)
	}

	s, err := service.New(service.Options{ConfigFile: cfg, HostAgent: true, IB: ibopen.Config{Transport: "ibsim"}})
	if err != nil {
		t.Fatal(err)
	}
	reg := collector.NewRegistry(s.Collectors()...)
	sctx, scancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(sctx); close(done) }()
	defer func() { scancel(); <-done }()
	var peakInuse uint64
	for i := 0; i < 8; i++ {
		for j := 0; j < 20; j++ {
			time.Sleep(time.Second)
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peakInuse = max(peakInuse, ms.HeapInuse)
		}
		var before, after, live runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := reg.Gather(); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		runtime.GC()
		runtime.ReadMemStats(&live)
		t.Logf("t=%ds live heap %d MiB (%d objects); heap in use before GC %d MiB; one Gather allocated %d MiB; peak in use so far %d MiB",
			20*(i+1), live.HeapAlloc>>20, live.HeapObjects, after.HeapInuse>>20, (after.TotalAlloc-before.TotalAlloc)>>20, peakInuse>>20)
	}
	status, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(l, "VmHWM") || strings.HasPrefix(l, "VmRSS") {
			t.Log(l + " (the test process: the exporter plus the test binary)")
		}
	}
	path := os.Getenv("SCALE_PROFILE")
	if path == "" {
		path = filepath.Join(os.TempDir(), "exporter-heap.pb.gz")
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		t.Fatal(err)
	}
	t.Logf("heap profile: %s", path)
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
