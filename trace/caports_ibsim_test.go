package trace

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/ibmad/madtest"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

// caPortsOf is the CA ports of a directed-route walk of the fabric from
// e (madtest: SMPs only, nothing asked of the SA), by LID: their nodes'
// descriptions.
func caPortsOf(t *testing.T, e *ibmad.Engine) map[uint16]string {
	t.Helper()
	ctx := context.Background()
	ports, err := madtest.WalkPortLIDs(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	out := map[uint16]string{}
	for _, p := range ports {
		if p.Node.Info.NodeType == ibmad.NodeTypeCA {
			out[p.LID] = p.Node.Desc
		}
	}
	return out
}

// sameCAPorts fails unless ds, in LID order, are the ports of want.
func sameCAPorts(t *testing.T, ds []Destination, want map[uint16]string) {
	t.Helper()
	if len(ds) != len(want) {
		t.Fatalf("%d CA ports listed, the walk found %d", len(ds), len(want))
	}
	for i, d := range ds {
		if name, ok := want[d.LID]; !ok || name != d.Name {
			t.Fatalf("CA port %d: LID %d %q; the walk: %q (found: %v)", i, d.LID, d.Name, name, ok)
		}
		if i > 0 && ds[i-1].LID >= d.LID {
			t.Fatalf("not in LID order: %d then %d", ds[i-1].LID, d.LID)
		}
	}
}

// TestCAPortsEqualTheWalkOnIbsim: the CA ports `ibtracer --all` lists
// (AllCAPorts) from OpenSM's SA on fattree-128 in ibsim are, LID for LID
// and name for name, those a directed-route walk finds. OpenSM under
// libumad2sim sends no RMPP (stock saquery gets one NodeRecord of the
// table too): CAPortsTable says the table was cut short, never lists a
// short one, and AllCAPorts asks LID by LID.
func TestCAPortsEqualTheWalkOnIbsim(t *testing.T) {
	ibsimtest.Require(t)
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "fattree-128.net"), ibsimtest.Options{KeepSM: true, SMHost: true})
	e := ibmad.NewEngine(fab.Dial("H0-0", false), ibmad.Options{Timeout: 2 * time.Second})
	t.Cleanup(func() { e.Close() })
	tr := New(e, Options{Validate: ValidateOff})
	ctx := context.Background()
	if tbl, err := tr.CAPortsTable(ctx); !errors.Is(err, ibmad.ErrTableTruncated) {
		t.Logf("CAPortsTable: %d ports, %v (not cut short)", len(tbl), err)
	}
	ds, err := tr.AllCAPorts(ctx)
	if err != nil {
		t.Fatalf("AllCAPorts: %v", err)
	}
	want := caPortsOf(t, e)
	if len(want) != 129 {
		t.Fatalf("the walk found %d CA ports, want fattree-128's and the SM's host", len(want))
	}
	sameCAPorts(t, ds, want)
}

// TestCAPortsTableOnTheSim: where the SA answers a whole table (the
// in-process sim's, as a real SA with RMPP), the CA ports come from one
// NodeRecord GetTable: the same ports as the walk finds, for a handful
// of SA MADs instead of one per LID.
func TestCAPortsTableOnTheSim(t *testing.T) {
	topo, err := sim.FatTree2(16, 8, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	s := newSim(t, topo, sim.Options{})
	tr := s.tracer("H0-0", Options{Validate: ValidateOff, Timeout: 10 * time.Second})
	ds, err := tr.CAPortsTable(context.Background())
	if err != nil {
		t.Fatalf("CAPortsTable: %v", err)
	}
	sameCAPorts(t, ds, caPortsOf(t, tr.Engine()))
	var saMADs uint64
	for _, c := range tr.Engine().Stats().Classes {
		if c.Class == ibmad.ClassSubnAdm {
			saMADs = c.Requests
		}
	}
	if saMADs == 0 || saMADs > 2 {
		t.Fatalf("%d SA requests for %d CA ports; want the one GetTable", saMADs, len(ds))
	}
}
