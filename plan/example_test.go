package plan_test

import (
	"fmt"
	"strings"

	"github.com/ibtracer/ibtracer_exporter/linkhealth"
	"github.com/ibtracer/ibtracer_exporter/plan"
)

// A plan in ibnetdiscover's form, and two links a trace found: one as
// planned, one whose leaf end went into the wrong spine.
func Example() {
	const cabling = `
switchguid=0x200003(200003)
Switch	7 "S-0000000000200003"		# "L1" base port 0 lid 6 lmc 0
[5]	"S-0000000000200000"[4]		# "S0" lid 2 4xQDR
[6]	"S-0000000000200001"[3]		# "S1" lid 3 4xQDR
`
	p, err := plan.Parse("site.net", strings.NewReader(cabling))
	if err != nil {
		fmt.Println(err)
		return
	}
	l1 := func(port uint8) plan.FoundEnd { return plan.FoundEnd{GUID: 0x200003, Desc: "L1", Port: port} }
	s1 := plan.FoundEnd{GUID: 0x200001, Desc: "S1", Port: 3}
	for _, f := range []plan.Found{
		{A: l1(6), B: s1, Width: 4, Speed: linkhealth.SpeedQDR},
		{A: l1(5), B: s1, Width: 4, Speed: linkhealth.SpeedQDR},
	} {
		j := p.Judge(f)
		fmt.Println(strings.TrimSpace(fmt.Sprintf("%s -> %s: %s %s", f.A, f.B, j.Status, j.Why)))
	}
	_, err = plan.Parse("site.net", strings.NewReader("Switch 7 \"L1\"\n[5] \"S0\"\n"))
	fmt.Println(err)
	// Output:
	// "L1"[6] -> "S1"[3]: planned
	// "L1"[5] -> "S1"[3]: miswired "L1"[5] should go to "S0"[4]; "S1"[3] should go to "L1"[6]
	// site.net:2: not a port line: want [PORT] "REMOTE"[PORT], such as [4] "S0"[1]
}
