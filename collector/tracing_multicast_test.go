package collector

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// classCounter counts the MADs a transport sends that are vendor (agent)
// MADs or LID-routed SMPs: the validation MADs.
type classCounter struct {
	ibmad.Transport
	validation atomic.Int64
}

func (c *classCounter) Send(p *ibmad.Packet) error {
	if cl := p.MAD.MgmtClass(); cl == ibmad.ClassIBTracer || cl == ibmad.ClassSubnLID {
		c.validation.Add(1)
	}
	return c.Transport.Send(p)
}

// TestMulticastDestination: an mlid: destination is traced over the
// group's MFTs from this node to its member lid:, with no validation MAD
// (every hop not_asked, validated_by none), the info series names it by
// MLID and member, and a new tree counts as a path change; a unicast
// destination to the same LID beside it is validated as before.
func TestMulticastDestination(t *testing.T) {
	f := mcastFabric(t)
	tp, _ := f.Attach("H0-0", 0)
	cc := &classCounter{Transport: tp}
	eng := ibmad.NewEngine(cc, ibmad.Options{})
	defer eng.Close()
	lid, _ := f.LIDOf("H1-1", 0)
	e := New(log.NewNopLogger(), "seed")
	e.clock = newFakeClock(time.Unix(1800000000, 0)) // the scheduler never fires: the test traces
	defer e.Stop()
	e.SetDevice(eng, nil, nil)
	e.Apply(mustConfig(t, fmt.Sprintf("interval: 1h\ntimeout: 100ms\nretries: 0\ndestinations:\n  - {name: mc, mlid: 0xc001, lid: %d}\n  - {name: uni, lid: %d}\n", lid, lid)))
	ctx := context.Background()
	mc, uni := e.dests.get("mc"), e.dests.get("uni")
	e.traceOnce(ctx, mc, time.Minute)
	r := mc.last
	if r == nil || r.Status != trace.StatusOK || r.MLID != 0xc001 || r.PathHops() != 4 || r.ValidationNote != trace.MulticastNote {
		t.Fatalf("mlid destination: %+v", r)
	}
	for _, h := range r.Hops[1:] {
		if h.Agent != trace.AgentNotAsked || h.ValidatedBy != "" {
			t.Fatalf("hop %d: %s by %q", h.Hop, h.Agent, h.ValidatedBy)
		}
	}
	if n := cc.validation.Load(); n != 0 {
		t.Fatalf("the multicast trace sent %d validation MADs", n)
	}
	e.traceOnce(ctx, uni, time.Minute)
	if uni.last.Status != trace.StatusOK || cc.validation.Load() == 0 {
		t.Fatalf("unicast beside it: %s, %d validation MADs", uni.last.Status, cc.validation.Load())
	}
	want := fmt.Sprintf(`
# HELP ibtracer_destination_info The destination's address and the ibtracer arguments that trace it by hand.
# TYPE ibtracer_destination_info gauge
ibtracer_destination_info{address="lid %d",dest="uni",ibtracer_args="-l %d"} 1
ibtracer_destination_info{address="mlid 0xc001 lid %d",dest="mc",ibtracer_args="-m 0xc001 %d"} 1
`, lid, lid, lid, lid)
	if err := testutil.CollectAndCompare(e, strings.NewReader(want), "ibtracer_destination_info"); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := 1; i <= 4; i++ {
		fmt.Fprintf(&b, "ibtracer_hop_verdict{dest=\"mc\",hop=\"%d\",validated_by=\"none\",verdict=\"not_asked\"} 1\n", i)
	}
	if got := gatherText(t, e, "ibtracer_hop_verdict"); !strings.Contains(got, b.String()) {
		t.Fatalf("hop_verdict:\n%s\nwant the lines\n%s", got, b.String())
	}

	checkTracesView(t, e, lid)

	// The group's tree moves to the other spine: a path change.
	spine := r.Hops[2].NodeDesc
	for p := 1; p <= f.Node(spine).NumPorts(); p++ {
		if err := f.SetLinkState(spine, p, false, true); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.SetMulticastGroup(0xc001, "H0-0", "H1-1", "H1-2"); err != nil {
		t.Fatal(err)
	}
	e.traceOnce(ctx, mc, time.Minute)
	if mc.last.Status != trace.StatusOK || mc.last.Hops[2].NodeDesc == spine {
		t.Fatalf("after the tree moved: %s %v, spine %s", mc.last.Status, mc.last.Err, mc.last.Hops[2].NodeDesc)
	}
	if got := gatherText(t, e, "ibtracer_path_changes_total"); !strings.Contains(got, `ibtracer_path_changes_total{dest="mc"} 1`) {
		t.Fatalf("path changes:\n%s", got)
	}

	// A reload that changes only the MLID starts the destination afresh.
	e.Apply(mustConfig(t, fmt.Sprintf("interval: 1h\ntimeout: 100ms\nretries: 0\ndestinations:\n  - {name: mc, mlid: 0xc002, lid: %d}\n  - {name: uni, lid: %d}\n", lid, lid)))
	if e.dests.get("mc") == mc || e.dests.get("uni") != uni {
		t.Fatal("a new mlid kept the old state, or the unchanged destination lost its own")
	}
}

// checkTracesView: /traces says what was traced and how: the MLID, the
// note, no addressing for the multicast path; the unicast one's SL.
func checkTracesView(t *testing.T, e *Exporter, lid uint16) {
	t.Helper()
	rec := httptest.NewRecorder()
	e.TracesHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/traces", nil))
	var views []struct {
		Name    string           `json:"name"`
		Address string           `json:"address"`
		Last    trace.JSONResult `json:"last_trace"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &views); err != nil {
		t.Fatalf("/traces: %v\n%s", err, rec.Body.String())
	}
	seen := 0
	for _, v := range views {
		switch v.Name {
		case "mc":
			if v.Address != fmt.Sprintf("mlid 0xc001 lid %d", lid) || v.Last.MLID != "0xc001" || v.Last.ValidationNote != trace.MulticastNote ||
				v.Last.Addressing != nil {
				t.Errorf("/traces mc: %+v", v)
			}
			seen++
		case "uni":
			if a := v.Last.Addressing; a == nil || a.SL != 0 || a.SLFrom != "default" || a.GRH {
				t.Errorf("/traces uni: addressing %+v", a)
			}
			seen++
		}
	}
	if seen != 2 {
		t.Fatalf("/traces:\n%s", rec.Body.String())
	}

}

// gatherText is the exposition of one family of e's series.
func gatherText(t *testing.T, e *Exporter, name string) string {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(e); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			v := m.GetGauge().GetValue() + m.GetCounter().GetValue()
			fmt.Fprintf(&b, "%s{%s} %g\n", name, strings.Join(ls, ","), v)
		}
	}
	return b.String()
}

// mcastFabric is a fat tree of 2 leaves, 2 spines and 3 hosts a leaf
// whose group 0xc001 has members H0-0, H1-1 and H1-2 (its MFTs
// programmed as an SM does).
func mcastFabric(t *testing.T) *sim.Fabric {
	t.Helper()
	topo, err := sim.FatTree2(2, 2, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	f, err := sim.New(topo, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.SetMulticastGroup(0xc001, "H0-0", "H1-1", "H1-2"); err != nil {
		t.Fatal(err)
	}
	return f
}
