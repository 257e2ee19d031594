package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestErrorLines: a syntax error is reported at the line it is on, not at
// the line of the block it breaks; an unknown key is named, with the
// closest valid key when one is close, never with Go type names.
func TestErrorLines(t *testing.T) {
	for file, want := range map[string]string{
		"invalid-bad-indent.yml":        "testdata/invalid-bad-indent.yml:7: did not find expected key (is the indentation right?)",
		"invalid-bad-indent-seq.yml":    "testdata/invalid-bad-indent-seq.yml:7: did not find expected '-' indicator (is the indentation right?)",
		"invalid-tab.yml":               "testdata/invalid-tab.yml:5: found a tab character that violates indentation",
		"invalid-unknown-key.yml":       "testdata/invalid-unknown-key.yml:5: unknown key `colour` in a destination (valid keys: name, lid, gid, guid, node, port, interval, labels, paths, hops, mlid)",
		"invalid-unknown-top-key.yml":   "testdata/invalid-unknown-top-key.yml:2: unknown key `destinatons` (did you mean `destinations`?)",
		"invalid-unknown-agent-key.yml": "testdata/invalid-unknown-agent-key.yml:4: unknown key `rate_per_sourc` in agent (did you mean `rate_per_source`?)",
		"invalid-type.yml":              "testdata/invalid-type.yml:2: retries: \"many\" is not an integer",
	} {
		t.Run(file, func(t *testing.T) {
			_, err := Load(filepath.Join("testdata", file))
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("got %v, want a config.Error", err)
			}
			if !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("got  %s\nwant %s", err, want)
			}
			if strings.Contains(err.Error(), "config.") {
				t.Fatalf("a Go type name in %q", err)
			}
		})
	}
}

func TestSuggest(t *testing.T) {
	keys := []string{"interval", "timeout", "retries", "destinations", "agent", "sl"}
	for in, want := range map[string]string{
		"destinatons": "destinations", "intervall": "interval", "retires": "retries", "Timeout": "timeout",
		"colour": "", "x": "", "agents": "agent", "foo": "",
	} {
		if got := suggest(in, keys); got != want {
			t.Errorf("suggest(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCheck: Check validates a file without printing, for --config.check.
func TestCheck(t *testing.T) {
	if err := Check("testdata/good.yml"); err != nil {
		t.Fatal(err)
	}
	if err := Check("testdata/invalid-unknown-top-key.yml"); err == nil || !strings.Contains(err.Error(), "did you mean `destinations`") {
		t.Fatalf("Check: %v", err)
	}
	if err := Check(filepath.Join(t.TempDir(), "missing.yml")); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Check of a missing file: %v", err)
	}
}

// TestNodeNameMap: node_name_map is read relative to the file; a bad map
// names the map's own line; a missing one is an error at the key.
func TestNodeNameMap(t *testing.T) {
	c, err := Load("testdata/node-name-map.yml")
	if err != nil || c.NodeNames.Name(0x0002c90300a1b2c3) != "leaf01 rack12" || len(c.NodeNames) != 1 {
		t.Fatalf("%v %v", c, err)
	}
	_, err = Load("testdata/invalid-node-name-map.yml")
	if err == nil || !strings.HasPrefix(err.Error(), "testdata/invalid-node-name-map.yml:2: node_name_map: testdata/bad.map:3: ") {
		t.Fatalf("bad map: %v", err)
	}
	_, err = Load("testdata/invalid-node-name-map-missing.yml")
	if err == nil || !strings.HasPrefix(err.Error(), "testdata/invalid-node-name-map-missing.yml:2: node_name_map: ") ||
		!errors.Is(err, os.ErrNotExist) && !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("missing map: %v", err)
	}
}

// FuzzParse: any input is a configuration or an error, never a panic.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"good.yml", "invalid-bad-indent.yml", "invalid-bad-indent-seq.yml", "invalid-tab.yml",
		"invalid-unknown-key.yml", "invalid-type.yml"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Parse("fuzz.yml", b)
		if (c == nil) == (err == nil) {
			t.Fatalf("config %v and error %v", c, err)
		}
	})
}
