package linkhealth

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/internal/fakeclock"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// pmaSends records the SL of every PerfMgt request the checker sends.
type pmaSends struct {
	ibmad.Transport
	mu  sync.Mutex
	sls []uint8
}

func (p *pmaSends) Send(pk *ibmad.Packet) error {
	if pk.MAD.MgmtClass() == ibmad.ClassPerfMgt && !pk.MAD.Method().IsResponse() {
		p.mu.Lock()
		p.sls = append(p.sls, pk.Addr.SL)
		p.mu.Unlock()
	}
	return p.Transport.Send(pk)
}

func (p *pmaSends) sent() []uint8 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]uint8(nil), p.sls...)
}

// qosFixture is fattree-mini.net with QoS: the tracer's SL (Options.SL,
// not fixed: no --sl, no sl:) is 2, which no VL serves (the switches drop
// GMPs on it), and the PathRecord to H1-2 gives SL 5. The tracer runs on
// the SM's node, so that the SA queries (on the SM's SL, 0) cross no link.
type qosFixture struct {
	f    *sim.Fabric
	tr   *trace.Tracer
	rec  *pmaSends
	dst  ibmad.GUID
	dlid uint16
}

const (
	qosTracerSL = 2 // dropped
	qosPathSL   = 5 // the PathRecord's, carried
)

func newQoSFixture(t *testing.T) *qosFixture {
	t.Helper()
	topo, err := sim.LoadTopology(filepath.Join("..", "testdata", "topologies", "fattree-mini.net"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := sim.New(topo, sim.Options{SMNode: "H0-0"})
	if err != nil {
		t.Fatal(err)
	}
	dst := f.Node("H1-2").Ports[1].GUID
	f.SetPathQoS(dst, sim.PathQoS{SL: qosPathSL})
	f.SetSLUnusable(qosTracerSL, true)
	tp, err := f.Attach("H0-0", 0)
	if err != nil {
		t.Fatal(err)
	}
	rec := &pmaSends{Transport: tp}
	e := ibmad.NewEngine(rec, ibmad.Options{Timeout: 50 * time.Millisecond, NoRetry: true})
	t.Cleanup(func() { e.Close() })
	clk := fakeclock.New(time.Unix(1_700_000_000, 0))
	tr := trace.New(e, trace.Options{SL: trace.DefaultSL(qosTracerSL), Timeout: 50 * time.Millisecond, Retries: new(0), Validate: trace.ValidateOff, Clock: clk})
	dlid, err := f.LIDOf("H1-2", 1)
	if err != nil {
		t.Fatal(err)
	}
	return &qosFixture{f: f, tr: tr, rec: rec, dst: dst, dlid: dlid}
}

// trace traces d and checks it reached H1-2 with the SL wanted.
func (q *qosFixture) trace(t *testing.T, d trace.Destination, sl uint8) *trace.Result {
	t.Helper()
	r := q.tr.Trace(context.Background(), d)
	if r.Status != trace.StatusOK || r.PathHops() != 4 {
		t.Fatalf("trace to %s: %s %v, %d hops", d, r.Status, r.Err, r.PathHops())
	}
	if r.Addressing == nil || r.Addressing.SL != sl {
		t.Fatalf("trace to %s: addressing %+v, want SL %d", d, r.Addressing, sl)
	}
	return r
}

// remoteEnds are the link ends of ph that are not the tracer's own port
// (a MAD to it crosses no link, so no SL is dropped on its way).
func remoteEnds(ph *PathHealth) []*LinkEnd {
	var out []*LinkEnd
	for i := range ph.Links {
		l := &ph.Links[i]
		if i > 0 {
			out = append(out, &l.A)
		}
		out = append(out, &l.B)
	}
	return out
}

// TestPMAReadsGoOnThePathSL: the PerfMgt reads of a path's link health go
// on the SL its trace addressed its MADs with (Result.Addressing: the
// PathRecord's SL 5), not on the tracer's SL 2, which the fabric drops: the
// trace reaches H1-2, and so do the counter reads of every link of it
// (docs/protocol.md, "SL and GRH").
func TestPMAReadsGoOnThePathSL(t *testing.T) {
	q := newQoSFixture(t)
	hc := NewChecker(q.tr, Options{Counters: true})
	r := q.trace(t, trace.Destination{GUID: q.dst}, qosPathSL)
	ph := hc.Check(context.Background(), r)
	for _, e := range remoteEnds(ph) {
		if e.Counters == nil || e.Counters.State != CountersFirst {
			t.Errorf("%s port %d (LID %d): counters %+v, want a first reading on SL %d", e.GUID, e.Port, e.LID, e.Counters, qosPathSL)
		}
	}
	sls := q.rec.sent()
	if len(sls) == 0 {
		t.Fatal("no PerfMgt MAD was sent: the test proves nothing")
	}
	for _, sl := range sls {
		if sl != qosPathSL {
			t.Fatalf("PerfMgt MADs went on SLs %v; the path's is %d", sls, qosPathSL)
		}
	}
}

// TestPMAFailureSharedOnlyOnItsSL: readings are shared for Options.Share.
// A reading that failed on one SL (a LID destination's: the tracer's SL 2,
// dropped) serves the paths on that SL, and no other: a path on SL 5
// crossing the same ports reads them itself, and its reading then serves
// every path, the SL 2 one too (a counter is a counter).
func TestPMAFailureSharedOnlyOnItsSL(t *testing.T) {
	q := newQoSFixture(t)
	hc := NewChecker(q.tr, Options{Counters: true, Share: time.Hour})
	byLID := q.trace(t, trace.Destination{LID: q.dlid}, qosTracerSL)
	byGUID := q.trace(t, trace.Destination{GUID: q.dst}, qosPathSL)

	first := hc.Check(context.Background(), byLID)
	for _, e := range remoteEnds(first) {
		if e.Counters == nil || e.Counters.State != CountersUnavailable {
			t.Fatalf("%s port %d on SL %d, which the fabric drops: counters %+v, want unavailable", e.GUID, e.Port, qosTracerSL, e.Counters)
		}
	}
	sent := len(q.rec.sent())
	if again := hc.Check(context.Background(), byLID); len(q.rec.sent()) != sent || again.Links[3].B.Counters.State != CountersUnavailable {
		t.Fatalf("a second path on SL %d read again (%d PerfMgt MADs, then %d) or did not share the failure: %+v",
			qosTracerSL, sent, len(q.rec.sent()), again.Links[3].B.Counters)
	}

	ph := hc.Check(context.Background(), byGUID)
	for _, e := range remoteEnds(ph) {
		if e.Counters == nil || e.Counters.State != CountersFirst {
			t.Errorf("%s port %d on SL %d: counters %+v, want a reading, not the failure on SL %d", e.GUID, e.Port, qosPathSL, e.Counters, qosTracerSL)
		}
	}
	for _, sl := range q.rec.sent()[sent:] {
		if sl != qosPathSL {
			t.Fatalf("the SL %d path's PerfMgt MADs went on SL %d", qosPathSL, sl)
		}
	}

	sent = len(q.rec.sent())
	shared := hc.Check(context.Background(), byLID)
	if len(q.rec.sent()) != sent {
		t.Fatalf("the SL %d path read again (%d PerfMgt MADs) although the SL %d reading is shared", qosTracerSL, len(q.rec.sent())-sent, qosPathSL)
	}
	for i, e := range remoteEnds(shared) {
		if want := remoteEnds(ph)[i].Counters; e.Counters != want {
			t.Errorf("%s port %d: the SL %d path got %+v, not the shared reading %+v", e.GUID, e.Port, qosTracerSL, e.Counters, want)
		}
	}
}
