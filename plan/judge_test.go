package plan

import (
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/linkhealth"
)

func mustParse(t *testing.T, s string) *Plan {
	t.Helper()
	p, err := Parse("t", strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const leafSpine = `
switchguid=0x10
Switch 8 "S-0000000000000010"		# "L1"
[1]	"H-0000000000000030"[1](31)		# "h1" 4xQDR
[5]	"S-0000000000000020"[4]		# "S0" 4xQDR
[6]	"S-0000000000000021"[3]		# "S1" 4xQDR

switchguid=0x20
Switch 4 "S-0000000000000020"		# "S0"
[4]	"S-0000000000000010"[5]		# "L1" 4xQDR

switchguid=0x21
Switch 4 "S-0000000000000021"		# "S1"
[3]	"S-0000000000000010"[6]		# "L1" 4xQDR
`

func TestJudge(t *testing.T) {
	p := mustParse(t, leafSpine)
	l1 := func(port uint8) FoundEnd { return FoundEnd{GUID: 0x10, Desc: "L1", Port: port} }
	s0 := func(port uint8) FoundEnd { return FoundEnd{GUID: 0x20, Desc: "S0", Port: port} }
	s1 := func(port uint8) FoundEnd { return FoundEnd{GUID: 0x21, Desc: "S1", Port: port} }
	qdr := func(a, b FoundEnd) Found { return Found{A: a, B: b, Width: 4, Speed: linkhealth.SpeedQDR} }
	for _, c := range []struct {
		name         string
		f            Found
		status, why  string
		wantA, wantB string
	}{
		{"as planned", qdr(l1(5), s0(4)), Planned, "", "", ""},
		{"either direction", qdr(s0(4), l1(5)), Planned, "", "", ""},
		{"unknown width and speed are not judged", Found{A: l1(5), B: s0(4)}, Planned, "", "", ""},
		{"replaced spine: new GUID, same name", qdr(l1(5), FoundEnd{GUID: 0x99, Desc: "S0", Port: 4}), Planned, "", "", ""},
		{"replaced leaf, seen from it", qdr(FoundEnd{GUID: 0x98, Desc: "L1", Port: 6}, s1(3)), Planned, "", "", ""},
		{"renamed, same GUID", qdr(l1(5), FoundEnd{GUID: 0x20, Desc: "MF0;S0:MQM8700", Port: 4}), Planned, "", "", ""},
		{"1X", Found{A: l1(5), B: s0(4), Width: 1, Speed: linkhealth.SpeedQDR}, BelowPlan, "1X where the plan says 4X", "", ""},
		{"SDR", Found{A: l1(5), B: s0(4), Width: 4, Speed: linkhealth.SpeedSDR}, BelowPlan, "SDR where the plan says QDR", "", ""},
		{"1X SDR", Found{A: l1(5), B: s0(4), Width: 1, Speed: linkhealth.SpeedSDR}, BelowPlan, "1X where the plan says 4X, SDR where the plan says QDR", "", ""},
		{"faster is fine", Found{A: l1(5), B: s0(4), Width: 12, Speed: linkhealth.SpeedEDR}, Planned, "", "", ""},
		{"swapped", qdr(l1(5), s1(3)), Miswired, `"L1"[5] should go to "S0"[4]; "S1"[3] should go to "L1"[6]`, `"S0"[4]`, `"L1"[6]`},
		{"wrong spine port", qdr(l1(5), s0(3)), Miswired, `"L1"[5] should go to "S0"[4]; "S0"[3] is not cabled in the plan`, `"S0"[4]`, ""},
		{"a port the plan leaves empty", qdr(l1(7), s0(4)), Miswired, `"L1"[7] is not cabled in the plan; "S0"[4] should go to "L1"[5]`, "", `"L1"[5]`},
		{"unknown nodes", qdr(FoundEnd{GUID: 1, Desc: "x", Port: 1}, FoundEnd{GUID: 2, Desc: "y", Port: 1}), NotInPlan, `neither "x"[1] nor "y"[1] is a cabled port of the plan`, "", ""},
		{"a host by its node-name-map name", qdr(FoundEnd{GUID: 0x77, Desc: "node 1 HCA-1", Name: "h1", Port: 1}, l1(1)), Planned, "", "", ""},
	} {
		j := p.Judge(c.f)
		if j.Status != c.status || j.Why != c.why || endStr(j.WantA) != c.wantA || endStr(j.WantB) != c.wantB {
			t.Errorf("%s: %s %q want A %s B %s; want %s %q %s %s", c.name, j.Status, j.Why, endStr(j.WantA), endStr(j.WantB), c.status, c.why, c.wantA, c.wantB)
		}
		if (j.Status == NotInPlan) != (j.Plan == nil) {
			t.Errorf("%s: plan link %+v", c.name, j.Plan)
		}
	}
}

func endStr(e *End) string {
	if e == nil {
		return ""
	}
	return e.String()
}

// TestJudgeAmbiguousName: two nodes of the plan named alike match by GUID
// only; a found node of that name with another GUID is not in the plan.
func TestJudgeAmbiguousName(t *testing.T) {
	p := mustParse(t, `
Switch 4 "S-0000000000000001"	# "switch"
[1]	"H-0000000000000011"[1]	# "h1"

Switch 4 "S-0000000000000002"	# "switch"
[1]	"H-0000000000000012"[1]	# "h2"
`)
	j := p.Judge(Found{A: FoundEnd{GUID: 2, Desc: "switch", Port: 1}, B: FoundEnd{GUID: 0x12, Desc: "h2", Port: 1}})
	if j.Status != Planned {
		t.Fatalf("by GUID: %+v", j)
	}
	j = p.Judge(Found{A: FoundEnd{GUID: 3, Desc: "switch", Port: 1}, B: FoundEnd{GUID: 0x13, Desc: "h3", Port: 1}})
	if j.Status != NotInPlan {
		t.Fatalf("ambiguous name: %+v", j)
	}
}
