package main

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// TestAllRoutedListsWhatTheSAWould: with an SA that hands no table over
// (sim.SARefusal.NoTables), --all lists the CA ports from the local
// switch's forwarding (allrouted.go), and lists exactly the ports the SA
// would: every CA port's base LID but the local one, with its node's
// description, in LID order; no switch LID and no second LID of an LMC
// range (fattree-4x2x4 at LMC 1). A CA port the local switch does not
// forward to, and one whose route breaks further on, are listed too,
// as the SA names them, with their failed traces (no_route): never
// dropped.
func TestAllRoutedListsWhatTheSAWould(t *testing.T) {
	f := newSim(t, "fattree-4x2x4.net", 1) // allrouted_cost_test.go
	f.SetSARefusal(sim.SARefusal{NoTables: true})
	const src = "H0-0"
	want := caPortsOfSim(t, f, src) // base LID -> node
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	newTracer := func() (*trace.Tracer, ibmad.PortAttributes) {
		tp, err := f.Attach(src, 0)
		if err != nil {
			t.Fatal(err)
		}
		e := ibmad.NewEngine(tp, ibmad.Options{Timeout: time.Second})
		t.Cleanup(func() { e.Close() })
		o := options{timeoutMS: 1000, retries: 1, noValidate: true, discovery: "auto", concurrency: 8}
		local, err := e.Port()
		if err != nil {
			t.Fatal(err)
		}
		return trace.New(e, o.traceOptions(ibmad.OUI(0))), local
	}

	// Two faults: H1-0 is not forwarded by the local leaf; H3-1's route
	// breaks at its own leaf.
	tr, _ := newTracer()
	pathTo := func(name string) []trace.Hop {
		lid, _ := f.LIDOf(name, 1)
		r := tr.Trace(ctx, trace.Destination{LID: lid})
		if r.Status != trace.StatusOK {
			t.Fatalf("%s: %s %v", name, r.Status, r.Err)
		}
		return r.Hops
	}
	unrouted, broken := "H1-0", "H3-1"
	hu, hb := pathTo(unrouted), pathTo(broken)
	lu, _ := f.LIDOf(unrouted, 1)
	lb, _ := f.LIDOf(broken, 1)
	if err := f.SetLFTEntry(hu[1].NodeDesc, lu, ibmad.LFTNoRoute); err != nil {
		t.Fatal(err)
	}
	if err := f.SetLFTEntry(hb[len(hb)-2].NodeDesc, lb, ibmad.LFTNoRoute); err != nil {
		t.Fatal(err)
	}

	tr, local := newTracer() // nothing kept from before the faults
	o := &options{concurrency: 8}
	dests, results, err := traceAllListed(ctx, tr, o, local, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The SA was asked of the LIDs the local leaf does not forward and of
	// the two LIDs whose trace failed, not of every LID (as it is when the
	// listing is the SA's, LID by LID), and of no other.
	routed, notRouted, err := tr.LocalForwarding(ctx)
	if err != nil || len(routed) < len(want) {
		t.Fatalf("local forwarding: %d LIDs forwarded, %d not: %v", len(routed), len(notRouted), err)
	}
	var saGets uint64
	for _, c := range tr.Engine().Stats().Classes {
		if c.Class == ibmad.ClassSubnAdm {
			saGets = c.Requests
		}
	}
	if max := uint64(1 + len(notRouted) + 1); saGets > max { // the refused table, the unrouted LIDs, the broken route's LID
		t.Fatalf("%d SA requests; want at most %d (the table, %d LIDs not forwarded, 1 whose trace failed)", saGets, max, len(notRouted))
	}
	t.Logf("%d CA ports listed; %d LIDs forwarded, %d not; %d SA requests", len(dests), len(routed), len(notRouted), saGets)
	checkListing(t, dests, results, want, unrouted, broken)
}

// checkListing fails unless dests, with their results, are exactly the
// CA ports of want (LID: node), in LID order, each result its
// destination's: unreachable for no route where the node is one of
// failing, else ok and ending at that node.
func checkListing(t *testing.T, dests []trace.Destination, results []*trace.Result, want map[uint16]string, failing ...string) {
	t.Helper()
	if len(dests) != len(want) || len(results) != len(want) {
		t.Fatalf("%d destinations, %d results; want the %d CA ports but the local one", len(dests), len(results), len(want))
	}
	for i, d := range dests {
		r := results[i]
		if want[d.LID] != d.Name || r.Destination != d || r.DLID != d.LID {
			t.Fatalf("listed LID %d %q (result for %v, DLID %d); want %q", d.LID, d.Name, r.Destination, r.DLID, want[d.LID])
		}
		if i > 0 && dests[i-1].LID >= d.LID {
			t.Fatalf("not in LID order: %d then %d", dests[i-1].LID, d.LID)
		}
		if slices.Contains(failing, d.Name) {
			if r.Status != trace.StatusUnreachable || r.Reason != trace.ReasonNoRoute {
				t.Fatalf("%s: %s/%s %v, want unreachable/no_route", d.Name, r.Status, r.Reason, r.Err)
			}
		} else if r.Status != trace.StatusOK || r.Hops[len(r.Hops)-1].NodeDesc != d.Name {
			t.Fatalf("%s: %s %v", d.Name, r.Status, r.Err)
		}
	}
}
