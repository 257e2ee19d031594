package collector

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// TestPathsAllNameAnyLIDsDivergenceOffThePath: with paths: all, a
// divergence off the path seen by one LID's trace other than the set's
// worst (the base LID's while all succeed) is named all the same: in
// ibtracer_path_diverging_switch_info and the "divergence off the path"
// line (issue 40, defect 8; found in review: only the worst trace's was).
func TestPathsAllNameAnyLIDsDivergenceOffThePath(t *testing.T) {
	topo, _ := sim.FatTree2(2, 2, 3, 1)
	f, err := sim.New(topo, sim.Options{LMC: 2})
	if err != nil {
		t.Fatal(err)
	}
	tp, _ := f.Attach("H0-0", 0)
	eng := ibmad.NewEngine(tp, ibmad.Options{})
	defer eng.Close()
	tr := trace.New(eng, trace.Options{Validate: trace.ValidateOff, Timeout: time.Second})
	lid, _ := f.LIDOf("H1-1", 0)
	e := New(log.NewNopLogger(), "seed")
	defer e.Stop()
	var buf logBuffer
	e.logger = log.NewLogfmtLogger(&buf)
	e.Apply(mustConfig(t, fmt.Sprintf("interval: 1h\ndestinations:\n  - {name: multi, lid: %d, paths: all, hops: true}\n", lid)))
	ctx := context.Background()
	e.traceSet(ctx, ctx, tr, e.dests.get("multi"), nil)
	s := e.dests.get("multi")
	s.mu.Lock()
	ps := s.set
	s.mu.Unlock()
	if len(ps.Paths) != 4 {
		t.Fatalf("%d paths, want the 4 LIDs of LMC 2", len(ps.Paths))
	}
	// Offset 1's trace saw a divergence off its path, as a validating
	// tracer reports it.
	off := *ps.Paths[1]
	off.Hops = append([]trace.Hop(nil), off.Hops...)
	off.Hops[2].Agent = trace.AgentMismatchOtherLink
	off.Hops[2].Diverged = &trace.Divergence{Switch: 0x200002, SwitchName: "L0", OutPort: 5, LFTPort: 6}
	set := &trace.PathSet{Destination: ps.Destination, BaseLID: ps.BaseLID, LMC: ps.LMC,
		Paths: []*trace.Result{ps.Paths[0], &off, ps.Paths[2], ps.Paths[3]}}
	set.Summarise()
	if set.Worst() == &off {
		t.Fatal("the premise: offset 1's trace is not the set's worst")
	}
	buf.take(t)
	s.recordSet(set)
	logEvents(e.logger, s.observe(set.Worst(), set.Paths...))
	text := scrape(t, e)
	want := `switch_guid="0x0000000000200002",switch_name="L0"`
	if n := strings.Count(text, "ibtracer_path_diverging_switch_info{"); n != 1 || !strings.Contains(text, want) {
		t.Errorf("%d diverging_switch_info series, want one naming L0:\n%s", n, grep(text, "diverging"))
	}
	lines := 0
	for _, l := range buf.take(t) {
		if l["msg"] == "divergence off the path" && l["diverging_switch"] == "L0 (0x0000000000200002)" {
			lines++
		}
	}
	if lines != 1 {
		t.Errorf("%d \"divergence off the path\" lines naming L0, want 1", lines)
	}
}
