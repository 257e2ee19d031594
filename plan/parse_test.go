package plan

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/linkhealth"
)

// TestParseIBNetDiscoverOutput reads what ibnetdiscover printed on ibsim
// (fattree-mini.net): 18 links, GUIDs from the ids, names from the
// comments, 4xSDR from the comments.
func TestParseIBNetDiscoverOutput(t *testing.T) {
	p, err := ParseFile("testdata/fattree-mini.ibnetdiscover")
	if err != nil {
		t.Fatal(err)
	}
	if p.Format != "ibnetdiscover" || len(p.Links) != 14 {
		t.Fatalf("format %s, %d links", p.Format, len(p.Links))
	}
	r, ok := p.lookup(FoundEnd{GUID: 0x200003, Port: 5})
	if !ok {
		t.Fatal("L1[5] not found by GUID")
	}
	near, far, l := p.end(r)
	if near.Node != "L1" || far != (End{Node: "S0", GUID: 0x200000, Port: 4}) || l.Width != 4 || l.Speed != linkhealth.SpeedSDR {
		t.Fatalf("L1[5]: near %+v far %+v link %+v", near, far, l)
	}
	// A CA's port line: [1](10000b) "S-..."[3] # lid 10 lmc 0 "L1" lid 6 4xSDR.
	r, ok = p.lookup(FoundEnd{Desc: "H1-2", GUID: 0x99, Port: 1}) // replaced: another GUID, same name
	if !ok {
		t.Fatal("H1-2[1] not found by name")
	}
	if _, far, _ := p.end(r); far != (End{Node: "L1", GUID: 0x200003, Port: 3}) {
		t.Fatalf("H1-2[1] -> %+v", far)
	}
}

// TestParseIBSimFile reads the repository's ibsim topologies: names as
// ids, w= options as the width.
func TestParseIBSimFile(t *testing.T) {
	files, _ := filepath.Glob("../testdata/topologies/*.net")
	if len(files) == 0 {
		t.Fatal("no topologies")
	}
	for _, f := range files {
		if _, err := ParseFile(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	p, err := ParseFile("../testdata/topologies/health.net")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := p.lookup(FoundEnd{Desc: "sw1", Port: 3})
	if _, _, l := p.end(r); l.Width != 1 {
		t.Fatalf("sw1[3] w=1: width %d", l.Width)
	}
}

func TestParseIBDM(t *testing.T) {
	const topo = `# written by hand in ibdiagnet -wt's form
MTS2400 S-1
   P1 -4x-10G-> MT23108 H-1 P1
   P2 -> MT23108 H-1 P2
   P24 -4x-2.5G-> MT23108 H-2 P1

MT23108 H-1
   P1 -4x-10G-> MTS2400 S-1 P1
`
	p, err := Parse("site.topo", strings.NewReader(topo))
	if err != nil {
		t.Fatal(err)
	}
	if p.Format != "ibdm" || len(p.Links) != 3 {
		t.Fatalf("%s: %+v", p.Format, p.Links)
	}
	want := Link{A: End{Node: "S-1", Port: 24}, B: End{Node: "H-2", Port: 1}, Width: 4, Speed: linkhealth.SpeedSDR, Line: 5}
	if p.Links[2] != want {
		t.Fatalf("got %+v, want %+v", p.Links[2], want)
	}
	j := p.Judge(Found{A: FoundEnd{Desc: "H-2", GUID: 7, Port: 1}, B: FoundEnd{Desc: "S-1", GUID: 8, Port: 24}, Width: 1, Speed: linkhealth.SpeedSDR})
	if j.Status != BelowPlan || j.Why != "1X where the plan says 4X" {
		t.Fatalf("%+v", j)
	}
}

// TestParseErrors: each malformed plan names the file, the line and what
// is wrong.
func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "f:1: no link in the plan"},
		{"Switch 7 \"L1\"\n[5] \"S0\"\n", "f:2: not a port line"},
		{"Switch 7 \"L1\"\n[9] \"S0\"[1]\n", "f:2: port 9 of \"L1\": its header declares 7 ports"},
		{"Switch 7 \"L1\"\n[0] \"S0\"[1]\n", "f:2: port \"0\" is not a port number 1..254"},
		{"[1] \"S0\"[1]\n", "f:1: a port line outside any Switch, Hca or Rt block"},
		{"Switch 7 \"L1\"\n[1] \"S0\"[1] bogus\n", "f:2: \"bogus\" after the remote port"},
		{"Switch 7 \"L1\"\n[1] \"S0\"[1]\n[1] \"S1\"[1]\n", "f:3: port 1 of \"L1\" is cabled again (first at line 2)"},
		{"Switch 7 \"L1\"\n[1] \"S0\"[1]\n\nSwitch 4 \"S0\"\n[1] \"L2\"[1]\n", "f:5: \"S0\"[1] is cabled to \"L2\"[1] here, but line 2 cables \"L1\"[1] to it"},
		{"Switch 7 \"L1\"\n[1] \"S0\"[1]\n[2] \"S0\"[1]\n", "f:3: \"S0\"[1] is the far end of two cables (line 2 and here)"},
		{"Switch 7 \"L1\"\nhello\n", "f:2: not a line of ibnetdiscover's output"},
		{"switchguid=zz\nSwitch 7 \"L1\"\n", "f:1: switchguid: \"zz\" is not a GUID"},
		{"Switch 300 \"L1\"\n", "f:1: Switch \"L1\": \"300\" is not a port count 1..254"},
		{"Switch 1 \"L1\"\n[1] \"L1\"[1]\n", "f:2: port 1 of \"L1\" is cabled to itself"},
		{"S1\n", "f:1: a system line needs SYSTEM-TYPE SYSTEM-NAME"},
		{"MTS S1 x\n", "f:1: \"x\" after the system name"},
		{"MTS S1\n  P1 => X Y P2\n", "f:2: not a port line: want LOCAL-PORT -> REM-TYPE REM-NAME REM-PORT"},
		{"MTS S1\n  L1/P1 -> X Y P2\n", "f:2: port \"L1/P1\": only a single-node system's ports"},
		{"MTS S1\n  P1 -3x-10G-> X Y P2\n", "f:2: width \"3\""},
		{"MTS S1\n  P1 -4x-11G-> X Y P2\n", "f:2: speed \"11\""},
		{"MTS S1\n  P1 -> X Y P2\nMTS S1\n", "f:3: system \"S1\" has a second section (first at line 1)"},
		{"MTS S1\n\n  P1 -> X Y P2\n", "f:3: a port line outside any system section"},
		{"Switch 7 \"L1\"\n[1] \"S\x00\"[1]\n", "f:2: not text"},
	} {
		_, err := Parse("f", strings.NewReader(c.in))
		var pe *ParseError
		if err == nil || !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q...", c.in, err, c.want)
		}
	}
	if _, err := ParseFile("testdata/none"); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// TestWriteReadsBack: what WriteIBNetDiscover writes, Parse reads, and
// every link written is planned.
func TestWriteReadsBack(t *testing.T) {
	found := []Found{
		{A: FoundEnd{GUID: 0x10, Desc: "L1", Port: 5, Type: ibmad.NodeTypeSwitch}, B: FoundEnd{GUID: 0x20, Desc: "S0", Port: 4, Type: ibmad.NodeTypeSwitch}, Width: 4, Speed: linkhealth.SpeedQDR},
		{A: FoundEnd{GUID: 0x30, Desc: "host 1", Name: "h1", Port: 1}, B: FoundEnd{GUID: 0x10, Desc: "L1", Port: 1, Type: ibmad.NodeTypeSwitch}, Width: 4, Speed: linkhealth.SpeedQDR},
	}
	var b strings.Builder
	if err := WriteIBNetDiscover(&b, found); err != nil {
		t.Fatal(err)
	}
	p, err := Parse("w", strings.NewReader(b.String()))
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	for _, f := range found {
		if j := p.Judge(f); j.Status != Planned {
			t.Errorf("%+v: %+v\n%s", f, j, b.String())
		}
	}
	if !strings.Contains(b.String(), "Ca\t1 \"H-0000000000000030\"\t\t# \"h1\"") {
		t.Errorf("CA block:\n%s", b.String())
	}
}
