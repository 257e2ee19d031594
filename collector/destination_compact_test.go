package collector

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// compact keeps every hop's value: only where they are stored changes.
func TestCompactKeepsTheResult(t *testing.T) {
	mk := func() *trace.Result {
		r := &trace.Result{Status: trace.StatusOK, MADs: 7}
		for i := 0; i < 5; i++ { // appended one by one, as the walk does
			path := ibmad.DRPath{}
			for j := 0; j < i; j++ {
				path = append(path, uint8(j+1))
			}
			r.Hops = append(r.Hops, trace.Hop{Hop: i, NodeGUID: ibmad.GUID(0x100 + i), NodeDesc: strings.Repeat("s", i+1) + " leaf",
				NodeName: map[bool]string{true: "", false: "site-" + string(rune('a'+i))}[i == 2], DRPath: path, InPort: uint8(i), OutPort: uint8(i + 1),
				Agent: trace.AgentValidated})
		}
		return r
	}
	r, want := mk(), mk()
	if cap(r.Hops) == len(r.Hops) {
		t.Fatal("the test's hops have no spare capacity: it shows nothing")
	}
	compact(r)
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("compact changed the result:\n%+v\nwant\n%+v", r.Hops, want.Hops)
	}
	if cap(r.Hops) != len(r.Hops) {
		t.Fatalf("hops: len %d, cap %d", len(r.Hops), cap(r.Hops))
	}
	// A hop's directed route cannot grow into the next one's.
	_ = append(r.Hops[1].DRPath, 99)
	if !reflect.DeepEqual(r, want) {
		t.Fatal("appending to one hop's route changed another's")
	}
	compact(nil)
	compact(&trace.Result{})
}
