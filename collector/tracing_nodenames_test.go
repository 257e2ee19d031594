package collector

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/ibtracer/ibtracer_exporter/collector/config"
)

// TestNodeNameMapNamesHops: the configuration's node_name_map gives every
// traced hop its site name in the exporter's results (/traces).
func TestNodeNameMapNamesHops(t *testing.T) {
	f, eng := simAt(t, 1, 1, 2)
	lid, _ := f.LIDOf("H0-1", 0)
	dir := t.TempDir()
	m := fmt.Sprintf("0x%016x \"leaf-a\"\n0x%016x \"host-b\"\n", uint64(f.Node("L0").GUID), uint64(f.Node("H0-1").GUID))
	if err := os.WriteFile(filepath.Join(dir, "names"), []byte(m), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := config.Parse(filepath.Join(dir, "c.yml"),
		[]byte(fmt.Sprintf("interval: 1s\nvalidate: false\nnode_name_map: names\ndestinations:\n  - {name: a, lid: %d}\n", lid)))
	if err != nil {
		t.Fatal(err)
	}
	e := New(log.NewNopLogger(), "seed")
	defer e.Stop()
	e.SetDevice(eng, nil, nil)
	e.Apply(c)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for _, v := range e.Traces() {
			if v.Last == nil || len(v.Last.Hops) < 2 {
				continue
			}
			var names []string
			for _, h := range v.Last.Hops {
				names = append(names, h.NodeName)
			}
			if got := fmt.Sprint(names); got != "[ leaf-a host-b]" {
				t.Fatalf("hop names %s, want [ leaf-a host-b] (the source is not in the map)", got)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no trace within 20s")
}
