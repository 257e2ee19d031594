package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sparseFile makes a file of size bytes (zeros, no disk used).
func sparseFile(t *testing.T, name string, size int64) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	return p
}

// Every file the configuration reads is bounded: the configuration itself,
// its node_name_map and its health.threshold_file. /dev/zero and a file
// just over the bound are refused with the file and the bound named.
func TestLoadRefusesOversizedFiles(t *testing.T) {
	dir := t.TempDir()
	cfg := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bigConfig := sparseFile(t, "big.yml", 16<<20+1)
	bigMap := sparseFile(t, "big.map", 32<<20+1)
	// A threshold file of valid comment lines, one byte over 1 MiB.
	var sb strings.Builder
	for sb.Len() < 1<<20 {
		sb.WriteString("# SymbolErrorCounter=10\n")
	}
	thresholds := []byte(sb.String())
	thresholds = append(thresholds[:1<<20-1], '\n', '\n')
	bigThresholds := cfg("big.thresholds", string(thresholds))

	mapZero := cfg("map-zero.yml", "interval: 30s\nnode_name_map: /dev/zero\n")
	mapBig := cfg("map-big.yml", "node_name_map: "+bigMap+"\n")
	thrZero := cfg("thr-zero.yml", "health:\n  enabled: true\n  threshold_file: /dev/zero\n")
	thrBig := cfg("thr-big.yml", "health:\n  enabled: true\n  threshold_file: big.thresholds\n")
	for path, want := range map[string]string{
		"/dev/zero": "/dev/zero: larger than 16 MiB, the most a configuration file may hold",
		bigConfig:   bigConfig + ": larger than 16 MiB, the most a configuration file may hold",
		mapZero:     mapZero + ":2: node_name_map: /dev/zero: larger than 32 MiB, the most a node-name-map may hold",
		mapBig:      mapBig + ":1: node_name_map: " + bigMap + ": larger than 32 MiB, the most a node-name-map may hold",
		thrZero:     thrZero + ":1: health.threshold_file: /dev/zero: larger than 1 MiB, the most a threshold file may hold",
		thrBig:      thrBig + ":1: health.threshold_file: " + bigThresholds + ": larger than 1 MiB, the most a threshold file may hold",
	} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			_, err := Load(path)
			if err == nil || err.Error() != want {
				t.Fatalf("got  %v\nwant %s", err, want)
			}
		})
	}
}
