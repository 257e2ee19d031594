package linkhealth

import (
	"context"
	"strings"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// TestPMAStatusIsNamed: a PMA that answers with an error status is named
// by that status in the reading's error, not by a pointer's address.
func TestPMAStatusIsNamed(t *testing.T) {
	s, _, hc, r, _ := healthSetup(t, Options{Counters: true})
	spine := s.f.NodeByGUID(r.Hops[2].NodeGUID)
	if err := s.f.SetPMAStatus(spine.Name, ibmad.StatusMethodAttrUnsupp); err != nil {
		t.Fatal(err)
	}
	ph := hc.Check(context.Background(), r)
	c := ph.Links[1].B.Counters
	want := "the PMA answered " + ibmad.StatusMethodAttrUnsupp.Err().Error()
	if c == nil || c.State != CountersUnavailable || !strings.HasSuffix(c.Err, want) {
		t.Fatalf("counters %+v, want an error ending %q", c, want)
	}
}
