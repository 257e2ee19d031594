package main

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// countingTransport counts what a run sends: every MAD, the SMPs, and
// the listing's SA queries: NodeRecord GetTables of the whole table
// (component mask 0) and NodeRecord Gets by LID alone.
type countingTransport struct {
	ibmad.Transport
	mads, smps, tables, nrGets atomic.Int64
}

func (c *countingTransport) Send(p *ibmad.Packet) error {
	c.mads.Add(1)
	m := &p.MAD
	var h ibmad.SAMAD
	isNR := m.MgmtClass() == ibmad.ClassSubnAdm && m.AttrID() == ibmad.AttrNodeRecord && h.UnmarshalBinary(m[:]) == nil
	switch {
	case m.MgmtClass().IsSMP():
		c.smps.Add(1)
	case isNR && m.Method() == ibmad.MethodGetTable && h.ComponentMask == 0:
		c.tables.Add(1)
	case isNR && m.Method() == ibmad.MethodGet && h.ComponentMask == ibmad.NRCompLID:
		c.nrGets.Add(1)
	}
	return c.Transport.Send(p)
}

// listOn runs --all's listing and traces from src on f with options o
// (traceAllListed; with bySA, the SA's answers LID by LID instead),
// counting what it sends.
func listOn(t *testing.T, f *sim.Fabric, src string, o options, bySA bool) ([]trace.Destination, []*trace.Result, *countingTransport, error) {
	t.Helper()
	tp, err := f.Attach(src, 0)
	if err != nil {
		t.Fatal(err)
	}
	c := &countingTransport{Transport: tp}
	e := ibmad.NewEngine(c, ibmad.Options{Timeout: time.Duration(o.timeoutMS) * time.Millisecond})
	t.Cleanup(func() { e.Close() })
	local, err := e.Port()
	if err != nil {
		t.Fatal(err)
	}
	tr := trace.New(e, o.traceOptions(ibmad.OUI(0)))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if bySA {
		ds, rs, err := traceAllStreaming(ctx, tr, &o, local, nil, nil, tr.StreamCAPortsBySA)
		return ds, rs, c, err
	}
	ds, rs, err := traceAllListed(ctx, tr, &o, local, nil, nil)
	return ds, rs, c, err
}

// caPortsOfSim is every CA port of f but src's: base LID -> node.
func caPortsOfSim(t *testing.T, f *sim.Fabric, src string) map[uint16]string {
	t.Helper()
	want := map[uint16]string{}
	for _, n := range f.Nodes() {
		if n.Type.String() != "ca" || n.Name == src {
			continue
		}
		lid, err := f.LIDOf(n.Name, 1)
		if err != nil {
			t.Fatal(err)
		}
		want[lid] = n.Name
	}
	return want
}

func newSim(t *testing.T, topo string, lmc uint8) *sim.Fabric {
	t.Helper()
	st, err := sim.LoadTopology(filepath.Join(topoDir, topo))
	if err != nil {
		t.Fatal(err)
	}
	f, err := sim.New(st, sim.Options{LMC: lmc})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestAllRoutedCostsNoMoreThanLIDByLID: where the SA hands no table
// over, listing the CA ports from the local switch's forwarding sends no
// more MADs in all than asking the SA LID by LID did (the traces
// included, --no-validate), at LMC 0 to 3 on fattree-128: with an LMC,
// the LIDs of a port's range after its base are not traced once the
// base is found (the whole range was: 1,455 MADs against 1,105 at LMC
// 2, 2,513 against 1,612 at LMC 3). And both list the same ports.
func TestAllRoutedCostsNoMoreThanLIDByLID(t *testing.T) {
	o := options{timeoutMS: 1000, retries: 2, noValidate: true, discovery: "auto", concurrency: 32}
	for lmc := range uint8(4) {
		cost := map[bool]int64{}
		for _, bySA := range []bool{true, false} {
			f := newSim(t, "fattree-128.net", lmc)
			f.SetSARefusal(sim.SARefusal{NoTables: true})
			ds, rs, c, err := listOn(t, f, "H0-0", o, bySA)
			if err != nil {
				t.Fatal(err)
			}
			checkListing(t, ds, rs, caPortsOfSim(t, f, "H0-0"))
			cost[bySA] = c.mads.Load()
		}
		t.Logf("LMC %d: %d MADs from the forwarding, %d LID by LID", lmc, cost[false], cost[true])
		if cost[false] > cost[true] {
			t.Fatalf("LMC %d: the listing from the forwarding sent %d MADs, LID by LID %d", lmc, cost[false], cost[true])
		}
	}
}

// TestAllMeetsARefusedSMPOnce: where this node may send no SMP (an HCA's
// SMP firewall, sim.SetSMPFirewall) the listing's read of the local
// switch's forwarding and the traces' walks meet the refusal in one
// flight (the local node's NodeInfo, its retries included), not one
// after the other: with the SA's table whole, the CA ports are listed
// from it and traced through the SA (auto mode); with the table cut
// short, the listing fails without asking the SA for its table or the
// same SMPs again (they were: 2 GetTables and 6 SMPs, and twice the
// time).
func TestAllMeetsARefusedSMPOnce(t *testing.T) {
	o := options{timeoutMS: 100, retries: 2, noValidate: true, discovery: "auto", concurrency: 8}
	for _, cut := range []bool{false, true} {
		f := newSim(t, "fattree-4x2x4.net", 0)
		f.SetSMPFirewall(true)
		f.SetSARefusal(sim.SARefusal{NoTables: cut})
		ds, rs, c, err := listOn(t, f, "H2-1", o, false)
		t.Logf("table cut %v: %d listed, %v; %d SMPs, %d NodeRecord tables, %d NodeRecord Gets", cut, len(ds), err, c.smps.Load(), c.tables.Load(), c.nrGets.Load())
		if c.smps.Load() > int64(1+o.retries) {
			t.Fatalf("table cut %v: %d SMPs; want one refused SMP and its %d retries", cut, c.smps.Load(), o.retries)
		}
		if cut { // (the SA-mode traces of a whole table read tables of their own)
			if err == nil || c.tables.Load() != 1 || c.nrGets.Load() != 0 {
				t.Fatalf("no table, no SMP: listed %d, %d NodeRecord tables, %d Gets, err %v; want the listing to fail after one table",
					len(ds), c.tables.Load(), c.nrGets.Load(), err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		checkListing(t, ds, rs, caPortsOfSim(t, f, "H2-1"))
	}
}

// TestAllSAOnlyListsLIDByLID: under SA-only discovery no SMP reads the
// local switch's forwarding, so where the SA's table comes cut short the
// CA ports are the SA's answers LID by LID (trace.StreamCAPortsBySA),
// after one table: one NodeRecord Get per LID up to the leaf's
// LinearFDBTop, every CA port but the local one named as the node is.
func TestAllSAOnlyListsLIDByLID(t *testing.T) {
	f := newSim(t, "fattree-4x2x4.net", 0)
	f.SetSARefusal(sim.SARefusal{NoTables: true})
	o := options{timeoutMS: 200, retries: 1, noValidate: true, discovery: "sa", concurrency: 8}
	ds, _, c, err := listOn(t, f, "H0-0", o, false)
	if err != nil {
		t.Fatal(err)
	}
	want := caPortsOfSim(t, f, "H0-0")
	t.Logf("%d listed; %d NodeRecord tables, %d NodeRecord Gets, %d SMPs", len(ds), c.tables.Load(), c.nrGets.Load(), c.smps.Load())
	if c.tables.Load() != 1 || c.nrGets.Load() < int64(maxLID(f)) || len(ds) != len(want) {
		t.Fatalf("%d NodeRecord tables, %d Gets, %d ports listed; want 1 table, a Get per LID (%d) and the %d CA ports",
			c.tables.Load(), c.nrGets.Load(), len(ds), maxLID(f), len(want))
	}
	for _, d := range ds {
		if want[d.LID] != d.Name {
			t.Fatalf("listed LID %d %q, want %q", d.LID, d.Name, want[d.LID])
		}
	}
}
