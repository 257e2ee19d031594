package sim

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

const topoDir = "../../testdata/topologies"

func TestLoadShippedTopologies(t *testing.T) {
	for _, tc := range []struct {
		file          string
		switches, cas int
		links         int
	}{
		{"two-switch.net", 2, 5, 8},
		{"chain-5.net", 5, 3, 7},
		{"fattree-mini.net", 4, 6, 14},
		{"fattree-128.net", 24, 128, 256},
	} {
		t.Run(tc.file, func(t *testing.T) {
			topo, err := LoadTopology(filepath.Join(topoDir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			var sw, ca, ends int
			for _, n := range topo.Nodes {
				if n.Type == ibmad.NodeTypeSwitch {
					sw++
				} else {
					ca++
				}
				for _, l := range n.Links[1:] {
					if l.Peer != "" {
						ends++
					}
				}
			}
			if sw != tc.switches || ca != tc.cas || ends/2 != tc.links {
				t.Errorf("got %d switches, %d CAs, %d links; want %d, %d, %d", sw, ca, ends/2, tc.switches, tc.cas, tc.links)
			}
			if _, err := New(topo, Options{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestMalformedTopology(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"bad-unknown-peer.net", `testdata/bad-unknown-peer.net:3: sw1[2]: peer node "nosuch" is not defined`},
		{"bad-asymmetric.net", `testdata/bad-asymmetric.net:2: sw1[1] -> h1[1], but h1[1] is cabled to sw1[2] (line 5)`},
		{"bad-port-range.net", `testdata/bad-port-range.net:2: node "sw1": port "5" out of range 1..4`},
		{"bad-header.net", `testdata/bad-header.net:1: Switch header: port count "many" is not a number in 1..254`},
		{"bad-duplicate.net", `testdata/bad-duplicate.net:3: node "h1" defined twice`},
		{"bad-orphan-port.net", `testdata/bad-orphan-port.net:2: port line outside a node record (a blank line ends a record)`},
	} {
		t.Run(tc.file, func(t *testing.T) {
			_, err := LoadTopology(filepath.Join("testdata", tc.file))
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want a ParseError", err)
			}
			if err.Error() != tc.want {
				t.Errorf("got  %q\nwant %q", err.Error(), tc.want)
			}
		})
	}
}

func TestGUIDsFollowIbsim(t *testing.T) {
	f := mustFabric(t, "chain-5.net", Options{})
	// ibsim: switches from 0x200000 (+1 each), CAs from 0x100000 (+ports+1),
	// CA port GUID = node GUID + port (ibsim gives HostB
	// 0x100003 with port GUID 0x100004).
	for name, want := range map[string]ibmad.GUID{"s1": 0x200000, "s5": 0x200004, "hostA": 0x100000, "hostB": 0x100002, "hostC": 0x100004} {
		if got := f.Node(name).GUID; got != want {
			t.Errorf("%s GUID %s, want %s", name, got, want)
		}
	}
	if got := f.Node("hostB").Ports[1].GUID; got != 0x100003 {
		t.Errorf("hostB port 1 GUID %s", got)
	}
}

func mustFabric(t testing.TB, file string, opts Options) *Fabric {
	t.Helper()
	topo, err := LoadTopology(filepath.Join(topoDir, file))
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(topo, opts)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// A topology path that never ends (/dev/zero) or a file over the bound is
// refused with an error naming the file and the bound.
func TestLoadTopologyTooLarge(t *testing.T) {
	over := filepath.Join(t.TempDir(), "huge.topo")
	f, err := os.Create(over)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(64<<20 + 1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	for path, want := range map[string]string{
		"/dev/zero": "topology: /dev/zero: larger than 64 MiB, the most a topology file may hold",
		over:        "topology: " + over + ": larger than 64 MiB, the most a topology file may hold",
	} {
		if _, err := LoadTopology(path); err == nil || err.Error() != want {
			t.Errorf("LoadTopology(%s): got %v, want %s", path, err, want)
		}
	}
}

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
