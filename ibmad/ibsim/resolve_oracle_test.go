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
// GID and node description (with and without a port), resolved by our
// client through a running OpenSM's SA, get the LID stock ibnetdiscover
// reports for that port; a node with two ports resolves to its first, and
// to its second once the first is unplugged and OpenSM has swept.
func TestOracleResolveEqualsIbnetdiscover(t *testing.T) {
	ibsimtest.Require(t)
	const at = "host1"
	fab := ibsimtest.Start(t, filepath.Join(topoDir, "two-switch.net"), ibsimtest.Options{KeepSM: true, SweepSeconds: 1})
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
	tracer := trace.New(e, trace.Options{Timeout: 2 * time.Second, Validate: trace.ValidateOff, ResolveTTL: new(time.Duration(0))})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	check := func(d trace.Destination, desc string, num uint8) {
		t.Helper()
		want := v.port(desc, num).lid
		r := tracer.Trace(ctx, d)
		if r.DLID != want || want == 0 {
			t.Errorf("%s: DLID %d (%s %v), ibnetdiscover: %q port %d lid %d", d, r.DLID, r.Status, r.Err, desc, num, want)
		}
		if d.Node != "" && r.Port != num {
			t.Errorf("%s: resolved port %d, want %d", d, r.Port, num)
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
	check(trace.Destination{Node: "host5"}, "host5", 1)
	check(trace.Destination{Node: "host5", Port: 1}, "host5", 1)
	check(trace.Destination{Node: "host5", Port: 2}, "host5", 2)
	if r := tracer.Trace(ctx, trace.Destination{Node: "host5", Port: 3}); r.Status != trace.StatusResolve || r.DLID != 0 {
		t.Errorf("host5 port 3: %s %v, DLID %d", r.Status, r.Err, r.DLID)
	}

	// Unplug host5's first port: once OpenSM has swept, the node resolves
	// to its second port.
	if err := fab.Console(`Unlink "host5"[1]`); err != nil {
		t.Fatal(err)
	}
	want := v.port("host5", 2)
	var r *trace.Result
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); {
		if r = tracer.Trace(ctx, trace.Destination{Node: "host5"}); r.DLID == want.lid && r.Port == 2 {
			break
		}
		time.Sleep(200 * time.Millisecond) // polling OpenSM's sweep, bounded by the deadline
	}
	if r.DLID != want.lid || r.Port != 2 {
		t.Fatalf("host5 with port 1 unplugged: DLID %d port %d (%s %v), want port 2 lid %d", r.DLID, r.Port, r.Status, r.Err, want.lid)
	}
	if r = tracer.Trace(ctx, trace.Destination{Node: "host5", Port: 1}); r.Status != trace.StatusResolve {
		t.Errorf("host5 port 1 unplugged: %s %v, DLID %d; want a resolve failure", r.Status, r.Err, r.DLID)
	}
}
