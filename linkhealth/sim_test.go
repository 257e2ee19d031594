package linkhealth

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/internal/fakeclock"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// fixture is an in-process fabric (ibmad/sim) and a tracer on it whose
// caches, and the checker's, expire by a fake clock.
type fixture struct {
	t   testing.TB
	f   *sim.Fabric
	tr  *trace.Tracer
	e   *ibmad.Engine
	clk *fakeclock.Clock
}

// newFixture loads fattree-mini.net and attaches a tracer at H0-0. The
// traces are plain walks (no vendor agents): the health reads the links
// of a path whatever validated it.
func newFixture(t testing.TB) *fixture {
	t.Helper()
	topo, err := sim.LoadTopology(filepath.Join("..", "testdata", "topologies", "fattree-mini.net"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := sim.New(topo, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	port, err := f.Attach("H0-0", 0)
	if err != nil {
		t.Fatal(err)
	}
	e := ibmad.NewEngine(port, ibmad.Options{Timeout: 100 * time.Millisecond, Retries: 1})
	t.Cleanup(func() { e.Close() })
	clk := fakeclock.New(time.Unix(1_700_000_000, 0))
	tr := trace.New(e, trace.Options{Timeout: 100 * time.Millisecond, Validate: trace.ValidateOff, Clock: clk})
	return &fixture{t: t, f: f, tr: tr, e: e, clk: clk}
}

// trace traces to LID dlid and fails the test unless the trace reached it.
func (s *fixture) trace(dlid uint16) *trace.Result {
	s.t.Helper()
	r := s.tr.Trace(context.Background(), trace.Destination{LID: dlid})
	if r.Status != trace.StatusOK {
		s.t.Fatalf("trace to LID %d: %s %v", dlid, r.Status, r.Err)
	}
	return r
}

func (s *fixture) lid(name string) uint16 {
	l, err := s.f.LIDOf(name, 0)
	if err != nil {
		s.t.Fatal(err)
	}
	return l
}
