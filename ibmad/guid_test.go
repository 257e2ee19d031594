package ibmad

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestGUIDStringIsFmts: GUID.String writes what fmt's "0x%016x" writes,
// for the edges and a million random GUIDs.
func TestGUIDStringIsFmts(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	gs := []GUID{0, 1, 0xf, 0x10, 0x0002c90300a1b2c3, 1<<63 - 1, 1 << 63, ^GUID(0)}
	for range 1_000_000 {
		gs = append(gs, GUID(r.Uint64()>>r.IntN(64)))
	}
	for _, g := range gs {
		if got, want := g.String(), fmt.Sprintf("0x%016x", uint64(g)); got != want {
			t.Fatalf("GUID(%d).String() = %q, want %q", uint64(g), got, want)
		}
	}
}
