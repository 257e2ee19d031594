package sim

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseTopology: any input either parses or returns an error naming
// file:line; nothing panics, and what parses builds a fabric.
func FuzzParseTopology(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(topoDir, "*.net"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil && len(b) < 4096 {
			f.Add(b)
		}
	}
	f.Add([]byte("Switch 2 \"a\"\n[1] \"b\"[1]\n\nHca 1 \"b\"\n[1] \"a\"[1]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		topo, err := ParseTopology("fuzz.net", bytes.NewReader(b))
		if err != nil {
			var pe *ParseError
			if errors.As(err, &pe) && pe.File != "fuzz.net" {
				t.Fatalf("error names %q", pe.File)
			}
			return
		}
		if len(topo.Nodes) > 64 {
			return // keep each run cheap
		}
		if _, err := New(topo, Options{}); err != nil {
			return
		}
	})
}
