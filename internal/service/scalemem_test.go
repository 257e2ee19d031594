//go:build soak

package service

// The capacity benchmark's setup (scripts/bench-exporter.sh) in process,
// for a heap profile that tells the exporter's memory from the simulated
// fabric's (not in CI):
//
//	SCALE_PROFILE=/tmp/scale.pb.gz go test -tags soak -run TestScaleHeap -timeout 30m -v ./internal/service/
//	go tool pprof -top -inuse_space /tmp/scale.pb.gz

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/internal/ibopen"
)

func TestScaleHeap(t *testing.T) {
	dir := t.TempDir()
	net := filepath.Join(dir, "fabric.net")
	out, err := exec.Command("python3", "../../../shared/tools/gen_fattree.py", "128", "64", "80").Output()
	if err != nil {
		t.Fatal(err)
	}
	writeConfig(t, net, string(out))
	n := 10000
	var b strings.Builder
	b.WriteString("interval: 60s\ntimeout: 500ms\nretries: 1\nconcurrency: 32\ndestinations:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  - {name: d%d, lid: %d, hops: false}\n", i, 194+i)
	}
	reg := runSoakService(t, b.String(), false, ibopen.Config{Transport: "sim", SimTopology: net, SimAgents: "all", SimSeed: 1})
	for i := 0; i < 5; i++ {
		time.Sleep(20 * time.Second)
		if _, err := reg.Gather(); err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		t.Logf("t=%ds heap_alloc=%d MiB objects=%d", 20*(i+1), ms.HeapAlloc>>20, ms.HeapObjects)
	}
	f, err := os.Create(os.Getenv("SCALE_PROFILE"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		t.Fatal(err)
	}
}
