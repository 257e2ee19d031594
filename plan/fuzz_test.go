package plan

import (
	"bytes"
	"errors"
	"os"
	"testing"
)

// FuzzParse: no input panics, and every error is a *ParseError with a
// line inside the input.
func FuzzParse(f *testing.F) {
	b, _ := os.ReadFile("testdata/fattree-mini.ibnetdiscover")
	f.Add(b)
	f.Add([]byte("MTS2400 S-1\n   P1 -4x-10G-> MT23108 H-1 P1\n"))
	f.Add([]byte("Switch 8 \"sw1\"\n[3]\t\"sw2\"[3] w=1\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		p, err := Parse("fuzz", bytes.NewReader(in))
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line < 1 || pe.Line > bytes.Count(in, []byte("\n"))+1 {
				t.Fatalf("%q: %v", in, err)
			}
			return
		}
		for _, l := range p.Links {
			p.Judge(Found{A: FoundEnd{GUID: l.A.GUID, Desc: l.A.Node, Port: l.A.Port}, B: FoundEnd{GUID: l.B.GUID, Desc: l.B.Node, Port: l.B.Port}})
		}
	})
}
