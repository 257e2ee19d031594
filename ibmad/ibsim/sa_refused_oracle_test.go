package ibsim_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sa"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// refusedGetTable sends an SA GetTable of ClassPortInfo, which an SA
// serves by Get only, and returns the answer. The engine takes only an
// answer with the request's response method (GetTableResp).
func refusedGetTable(t *testing.T, tr ibmad.Transport) ibmad.MAD {
	t.Helper()
	e := ibmad.NewEngine(tr, ibmad.Options{Timeout: 2 * time.Second})
	defer e.Close()
	local, err := e.Port()
	if err != nil || local.SMLID == 0 {
		t.Fatalf("port %+v: %v", local, err)
	}
	req := &ibmad.Request{Addr: sa.Address(local), NoRetry: true}
	g := ibmad.NewSAGet(ibmad.AttrClassPortInfo, 0)
	g.Method = ibmad.MethodGetTable
	_ = g.MarshalTo(req.MAD[:])
	var resp ibmad.Response
	if err := e.Do(context.Background(), req, &resp); err != nil {
		t.Fatalf("GetTable ClassPortInfo: %v (drops %v)", err, e.Stats().Drops)
	}
	return resp.MAD
}

// TestOracleRefusedGetTableIsAGetTableResp: OpenSM answers a GetTable it
// does not serve with a GetTableResp carrying an error status, not a
// GetResp; the simulator's SA answers in the same method (the engine
// would drop any other as an answer to another question).
func TestOracleRefusedGetTableIsAGetTableResp(t *testing.T) {
	ibsimtest.Require(t)
	if testing.Short() {
		t.Skip("starts ibsim and OpenSM")
	}
	topo := filepath.Join(topoDir, "two-switch.net")
	fab := ibsimtest.Start(t, topo, ibsimtest.Options{KeepSM: true})
	theirs := refusedGetTable(t, fab.Dial("host1", false))
	tp, err := sim.LoadTopology(topo)
	if err != nil {
		t.Fatal(err)
	}
	f, err := sim.New(tp, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	port, err := f.Attach("host1", 0)
	if err != nil {
		t.Fatal(err)
	}
	ours := refusedGetTable(t, port)
	if theirs.Method() != ibmad.MethodGetTableResp || theirs.Status() == 0 {
		t.Fatalf("OpenSM answered method %s status %s", theirs.Method(), theirs.Status())
	}
	if ours.Method() != theirs.Method() || ours.Status() == 0 {
		t.Fatalf("the simulator answered method %s status %s; OpenSM %s status %s", ours.Method(), ours.Status(), theirs.Method(), theirs.Status())
	}
	t.Logf("OpenSM: %s status %s; simulator: %s status %s", theirs.Method(), theirs.Status(), ours.Method(), ours.Status())
}
