package ibsim_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// TestOracleResolveEqualsIbnetdiscover: destinations named by port GUID,
// GID and node description, resolved by our client through a running
// OpenSM's SA, get the LID stock ibnetdiscover reports for that port.
func TestOracleResolveEqualsIbnetdiscover(t *testing.T) {
	ibsimtest.Require(t)
	const at = "host1"
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "two-switch.net"), ibsimtest.Options{KeepSM: true})
	out, err := fab.Tool(at, "ibnetdiscover")
	if err != nil {
		t.Fatal(err)
	}
	v := ibnetdiscoverView(out)
	if len(v.nodes) != 7 || len(v.nodes["host5"].ports) != 2 {
		t.Fatalf("ibnetdiscover: want 7 nodes, host5 with 2 ports; parsed %+v from\n%s", v.nodes, out)
	}

	tr := fab.Dial(at, false)
	e := ibmad.NewEngine(tr, ibmad.Options{Timeout: 2 * time.Second})
	defer e.Close()
	local, err := tr.Port()
	if err != nil {
		t.Fatal(err)
	}
	tracer := trace.New(e, trace.Options{Timeout: 2 * time.Second, NoValidate: true})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	check := func(d trace.Destination, desc string, num uint8) {
		t.Helper()
		want := v.port(desc, num).lid
		r := tracer.Trace(ctx, d)
		if r.DLID != want || want == 0 {
			t.Errorf("%s: DLID %d (%s %v), ibnetdiscover: %q port %d lid %d", d, r.DLID, r.Status, r.Err, desc, num, want)
		}
	}
	for desc, n := range v.nodes {
		for num, p := range n.ports {
			check(trace.Destination{GUID: p.guid}, desc, num)
			check(trace.Destination{GID: ibmad.MakeGID(local.GIDPrefix, p.guid)}, desc, num)
		}
		if len(n.ports) == 1 {
			for num := range n.ports {
				check(trace.Destination{Node: desc}, desc, num)
			}
		}
	}
}
