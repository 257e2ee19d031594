package localize_test

import (
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/localize"
)

// Two destinations share the link from a leaf to a spine; one of them
// lost a hop beyond it. The link only the bad path crosses keeps its whole
// part of the vote, the shared one is partly cleared by the good path; the
// host's link, named by no bad path, has no suspicion and is not ranked.
func Example() {
	host := localize.NewLink(0x10, 1, 0x20, 1)     // host to leaf
	uplink := localize.NewLink(0x20, 5, 0x30, 1)   // leaf to spine
	downlink := localize.NewLink(0x30, 2, 0x40, 3) // spine to the bad path's leaf

	var a localize.Accumulator
	a.Add(localize.Path{Links: []localize.Link{host, uplink}}) // a good path
	bad := localize.Path{Links: []localize.Link{host, uplink, downlink}}
	bad.Blame(localize.CauseLost, uplink, downlink) // the links in front of the lost hop
	a.Add(bad)

	for _, e := range localize.Rank(a.Evidence(), localize.BySuspicion) {
		fmt.Printf("%v paths=%d bad=%d suspicion=%.2f\n", e.Link, e.Paths, e.BadPaths, e.Suspicion)
	}
	// Output:
	// 0x0000000000000030/2-0x0000000000000040/3 paths=1 bad=1 suspicion=0.67
	// 0x0000000000000020/5-0x0000000000000030/1 paths=2 bad=1 suspicion=0.33
}
