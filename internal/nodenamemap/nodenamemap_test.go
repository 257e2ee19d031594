package nodenamemap

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	in := strings.Join([]string{
		"# site names",
		"",
		"0x0002c90300a1b2c3 \"leaf01 rack12\"",
		"   0x10 \"spine 1\"   # trailing comment",
		"0x11\tunquoted-name",
		"0x12",                             // a GUID without a name adds nothing
		"0x0002c90300a1b2c3 \"duplicate\"", // the first name wins
		"20 \"decimal\"",
		"0x13 \"a#b\"",
		"\t# indented comment",
	}, "\n")
	m, err := Parse("map", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := Map{0x0002c90300a1b2c3: "leaf01 rack12", 0x10: "spine 1", 0x11: "unquoted-name", 20: "decimal", 0x13: "a"}
	if len(m) != len(want) {
		t.Fatalf("got %v, want %v", m, want)
	}
	for g, n := range want {
		if m.Name(g) != n {
			t.Errorf("0x%x: %q, want %q", g, m.Name(g), n)
		}
	}
	if m.Name(0x99) != "" || Map(nil).Name(1) != "" {
		t.Fatal("an unknown GUID has a name")
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{
		"0x10 \"ok\"\nleaf01 0x11\n",
		"0x10 \"ok\"\n0xZZ \"bad\"\n",
		"0x10 \"ok\"\n0x1\"glued\"\n",
		"0x10 \"ok\"\n0x10000000000000000 \"too big\"\n",
	} {
		_, err := Parse("site.map", strings.NewReader(in))
		var pe *Error
		if !errors.As(err, &pe) || pe.Line != 2 || !strings.HasPrefix(err.Error(), "site.map:2: ") {
			t.Errorf("%q: %v, want an error at site.map:2", in, err)
		}
	}
}

func TestLoad(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ib-node-name-map")
	if err := os.WriteFile(p, []byte("0x5 \"five\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Load(p)
	if err != nil || m.Name(5) != "five" {
		t.Fatalf("%v %v", m, err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("no error for a missing file")
	}
}

// A map path that never ends (/dev/zero) or a file over the bound is
// refused with an error naming the file and the bound, without reading
// it all.
func TestLoadTooLarge(t *testing.T) {
	over := filepath.Join(t.TempDir(), "huge.map")
	f, err := os.Create(over)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(32<<20 + 1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	for path, want := range map[string]string{
		"/dev/zero": "/dev/zero: larger than 32 MiB, the most a node-name-map may hold",
		over:        over + ": larger than 32 MiB, the most a node-name-map may hold",
	} {
		if _, err := Load(path); err == nil || err.Error() != want {
			t.Errorf("Load(%s): got %v, want %s", path, err, want)
		}
	}
}

// A name is cut to MaxName bytes at a character's start (a 100 kB name
// went whole into labels, logs and pages), and an error quotes at most
// MaxName bytes of the line it could not read.
func TestLongNamesAreCut(t *testing.T) {
	long := strings.Repeat("n", 100<<10)
	multi := strings.Repeat("a", MaxName-1) + "é" // é is 2 bytes: it would end past MaxName
	m, err := Parse("map", strings.NewReader("0x10 \""+long+"\"\n0x11 \""+multi+"\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Name(0x10); got != long[:MaxName] {
		t.Errorf("a 100 kB name kept %d bytes, want %d", len(got), MaxName)
	}
	if got := m.Name(0x11); got != multi[:MaxName-1] {
		t.Errorf("a name cut in a character: %q", got)
	}
	_, err = Parse("map", strings.NewReader("bad "+long+"\n"))
	if err == nil || len(err.Error()) > 200 || !strings.Contains(err.Error(), "(102404 bytes)") {
		t.Errorf("error of %d bytes, want a short one naming the line's length: %.200s", len(err.Error()), err)
	}
}
