package collector

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ibtracer/ibtracer_exporter/agent"
	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// mad_rate and mad_rate_per_target reach the engine when the device
// opens and again on every reload, and are exported.
func TestBudgetFollowsConfiguration(t *testing.T) {
	_, eng := simAt(t, 1, 1, 2)
	e := New(log.NewNopLogger(), "seed")
	defer e.Stop()
	e.Apply(mustConfig(t, "mad_rate: 300\nmad_rate_per_target: 25\n"))
	e.SetDevice(eng, nil, nil)
	if st := eng.BudgetStats(); st.Rate != 300 || st.PerTarget != 25 {
		t.Fatalf("after the device opened: %+v", st)
	}
	e.Apply(mustConfig(t, "mad_rate: 1000\n"))
	if st := eng.BudgetStats(); st.Rate != 1000 || st.PerTarget != 0 {
		t.Fatalf("after a reload: %+v", st)
	}
	want := `
# HELP ibtracer_mad_budget_per_second The MAD budget: MADs per second the engine may send in all (scope="all") and to one node (scope="target"); 0: no limit.
# TYPE ibtracer_mad_budget_per_second gauge
ibtracer_mad_budget_per_second{scope="all"} 1000
ibtracer_mad_budget_per_second{scope="target"} 0
`
	if err := testutil.CollectAndCompare(e, strings.NewReader(want), "ibtracer_mad_budget_per_second"); err != nil {
		t.Fatal(err)
	}
}

// The budget sits below the tracer's caches: under a budget that makes
// MADs wait, the traces of a path (with LFT blocks and verdicts shared
// across destinations) spend exactly the MADs they spend without one.
func TestBudgetKeepsSharing(t *testing.T) {
	topo, _ := sim.FatTree2(2, 2, 4, 1)
	f, _ := sim.New(topo, sim.Options{})
	for _, n := range f.Nodes() {
		if n.IsSwitch() || n.Name == "H0-0" {
			continue
		}
		tr, _ := f.Attach(n.Name, 0)
		ae := ibmad.NewEngine(tr, ibmad.Options{})
		defer ae.Close()
		if _, err := agent.New(ae, agent.Config{RatePerSource: 1e6}); err != nil {
			t.Fatal(err)
		}
	}
	run := func(b ibmad.Budget) ([]int, ibmad.BudgetStats) {
		tr, _ := f.Attach("H0-0", 0)
		eng := ibmad.NewEngine(tr, ibmad.Options{})
		defer eng.Close()
		eng.SetBudget(b)
		tracer := trace.New(eng, trace.Options{Timeout: 2 * time.Second, ShareValidation: time.Hour, Validate: trace.ValidateAgent})
		var mads []int
		for _, h := range []string{"H1-0", "H1-1", "H1-2", "H1-0"} {
			lid, _ := f.LIDOf(h, 0)
			r := tracer.Trace(context.Background(), trace.Destination{LID: lid})
			if r.Status != trace.StatusOK {
				t.Fatalf("%s: %s %v", h, r.Status, r.Err)
			}
			mads = append(mads, r.MADs)
		}
		return mads, eng.BudgetStats()
	}
	free, _ := run(ibmad.Budget{})
	paced, st := run(ibmad.Budget{Rate: 100})
	t.Logf("MADs per trace: %v without a budget, %v under 100/s (%d waits, %v waited)", free, paced, st.Waits, st.Waited)
	if fmt.Sprint(free) != fmt.Sprint(paced) {
		t.Fatalf("MADs per trace: %v without a budget, %v with one", free, paced)
	}
	if st.Waits == 0 {
		t.Fatal("the budget never made a MAD wait: the test shows nothing")
	}
	if free[1] >= free[0] {
		t.Fatalf("the second destination behind the same leaves spent %d MADs, the first %d: nothing shared", free[1], free[0])
	}
}

// The budget waits on the exporter's one clock (docs/architecture.md,
// "One clock"): on a fake clock, a MAD over mad_rate_per_target waits
// until the test moves the clock, not for the wall clock's second.
func TestBudgetWaitsOnTheExportersClock(t *testing.T) {
	_, eng := simAt(t, 1, 1, 2)
	fc := newFakeClock(time.Unix(1800000000, 0))
	e := New(log.NewNopLogger(), "seed")
	e.clock = fc
	defer e.Stop()
	e.Apply(mustConfig(t, "mad_rate_per_target: 1\n"))
	e.SetDevice(eng, nil, nil)
	pa, err := eng.Port()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	for i := 0; i < 2; i++ { // the bucket holds one token (a tenth of a second deep, at least one)
		go func() {
			smp := ibmad.NewLIDGet(ibmad.AttrNodeInfo, 0)
			req := &ibmad.Request{Addr: ibmad.SMPAddress(pa.LID)}
			_ = smp.MarshalTo(req.MAD[:])
			var resp ibmad.Response
			done <- eng.Do(context.Background(), req, &resp)
		}()
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		t.Fatalf("the second MAD went after %v of wall time only (err %v): the budget waits on the wall clock", time.Second, err)
	case <-time.After(1500 * time.Millisecond):
	}
	fc.WaitPending(t, 1, "the budget's wait")
	fc.Add(time.Second)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
