package pages

import (
	"testing"

	"github.com/ibtracer/ibtracer_exporter/linkhealth"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// A link whose verdict is ok but whose error counters rose over a limit
// is unhealthy: the pages say "errors", never a red "ok" (seen on the
// demo's same-leaf link before).
func TestPagesLinkOverLimitSaysErrors(t *testing.T) {
	j := &trace.JSONResult{Status: "ok", Hops: []trace.JSONHop{{Hop: 0}, {Hop: 1}}}
	h := &PathHealthView{Links: []LinkHealthView{{Hop: 1, Verdict: linkhealth.LinkOK, Healthy: false, Problems: []string{"over limit: a:SymbolErrorCounter"}}}}
	d := draw(j, h, nil)
	if d.Links[1].Class != "l-bad" || d.Links[1].Text != "✗ errors" {
		t.Errorf("arrow %+v, want l-bad ✗ errors", d.Links[1])
	}
	if s := h.Summary(); s != "unhealthy: link 1 errors" {
		t.Errorf("summary %q", s)
	}
}
