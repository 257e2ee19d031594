package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDiscoverGood(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "site.map"), []byte("0x0002c90300a1b2c3 \"rack1-n01\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	yml := `interval: 30s
node_name_map: site.map
mad_rate: 500
mad_rate_per_target: 20
discover:
  - all: true
    sample: 16
    rotate: 30m
    labels: {pool: compute}
  - node_type: switch
    refresh: 1m
    hops: true
  - node_desc: "^storage[0-9]+ "
    interval: 10s
  - node_names: [rack1-n01]
`
	p := filepath.Join(dir, "c.yml")
	if err := os.WriteFile(p, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if c.MADRate != 500 || c.MADRatePerTarget != 20 || len(c.Discover) != 4 {
		t.Fatalf("%+v", c)
	}
	s := c.Discover
	if !s[0].All || s[0].Sample != 16 || time.Duration(s[0].Rotate) != 30*time.Minute ||
		time.Duration(s[0].Refresh) != DefaultRefresh || time.Duration(s[0].Interval) != 30*time.Second || s[0].HopSeries() {
		t.Fatalf("selector 0: %+v", s[0])
	}
	if s[1].NodeType != "switch" || time.Duration(s[1].Refresh) != time.Minute || !s[1].HopSeries() {
		t.Fatalf("selector 1: %+v", s[1])
	}
	if s[2].Regexp == nil || !s[2].Regexp.MatchString("storage07 HCA-1") || time.Duration(s[2].Interval) != 10*time.Second {
		t.Fatalf("selector 2: %+v", s[2])
	}
	if !s[3].GUIDs[0x0002c90300a1b2c3] || len(s[3].GUIDs) != 1 {
		t.Fatalf("selector 3: %+v", s[3])
	}
	if got := c.LabelNames(); len(got) != 1 || got[0] != "pool" {
		t.Fatalf("label names %v", got)
	}
}

func TestDiscoverInvalid(t *testing.T) {
	for yml, want := range map[string]string{
		"discover:\n  - {all: true, node_type: ca}\n":         "c.yml:2: discover[0]: set exactly one of all, node_type, node_desc or node_names (found 2)",
		"discover:\n  - sample: 3\n":                          "c.yml:2: discover[0]: set exactly one of all, node_type, node_desc or node_names (found 0)",
		"discover:\n  - node_type: router\n":                  `c.yml:2: discover[0].node_type: "router": want ca or switch`,
		"discover:\n  - node_desc: \"(\"\n":                   "c.yml:2: discover[0].node_desc: \"(\" is not a regular expression",
		"discover:\n  - node_names: [x]\n":                    "c.yml:2: discover[0].node_names: needs node_name_map",
		"discover:\n  - all: true\n    rotate: 1h\n":          "c.yml:3: discover[0].rotate: applies only with sample",
		"discover:\n  - {all: true, sample: 2, rotate: 1s}\n": "c.yml:2: discover[0].rotate: 1s is shorter than 1m0s",
		"discover:\n  - {all: true, refresh: 1s}\n":           "c.yml:2: discover[0].refresh: 1s is shorter than 10s",
		"discover:\n  - {all: true, sample: -1}\n":            "c.yml:2: discover[0].sample: -1: want 0 (every port) .. 100000",
		"discover:\n  - {all: true, labels: {hop: x}}\n":      `c.yml:2: discover[0].labels: "hop" is set by the exporter`,
		"discover:\n  - {all: true, colour: red}\n":           "unknown key `colour` in a discover selector",
		"mad_rate: -1\n": "c.yml:1: mad_rate: -1: want MADs per second between 0 (no limit) and 1000000",
		"mad_rate: 10\nmad_rate_per_target: 20\n":                   "c.yml:2: mad_rate_per_target: 20 is above mad_rate (10)",
		"destinations:\n  - name: a\n    lid: 1\n    hops: maybe\n": `c.yml:4: destinations[0].hops: "maybe" is not true or false`,
	} {
		_, err := Parse("c.yml", []byte(yml))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", yml, err, want)
		}
	}
}

// A node_names name that node_name_map gives two nodes is an error that
// lists both: before, one of them was picked at random (map order).
func TestDiscoverNodeNamesAmbiguous(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "site.map"), []byte("0x20 \"rack1-n01\"\n0x10 \"rack1-n01\"\n0x30 \"rack1-n02\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "c.yml")
	if err := os.WriteFile(p, []byte("node_name_map: site.map\ndiscover:\n  - node_names: [rack1-n02, rack1-n01]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(p)
	want := `c.yml:3: discover[0].node_names: "rack1-n01" names 2 nodes in node_name_map: 0x0000000000000010, 0x0000000000000020; give each node its own name`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %q", err, want)
	}
}
