package collector

import (
	"strings"
	"testing"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// mad_rate and mad_rate_per_target reach the engine when the device
// opens and again on every reload, and are exported.
func TestBudgetFollowsConfiguration(t *testing.T) {
	topo, _ := sim.FatTree2(1, 1, 2, 1)
	f, _ := sim.New(topo, sim.Options{})
	tr, err := f.Attach("H0-0", 0)
	if err != nil {
		t.Fatal(err)
	}
	eng := ibmad.NewEngine(tr, ibmad.Options{})
	defer eng.Close()
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
