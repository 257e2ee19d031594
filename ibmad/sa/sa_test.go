package sa_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sa"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sim"
)

const topoDir = "../../testdata/topologies"

func simEngine(t *testing.T, topo, at string) (*sim.Fabric, *ibmad.Engine, ibmad.Address) {
	t.Helper()
	tp, err := sim.LoadTopology(filepath.Join(topoDir, topo))
	if err != nil {
		t.Fatal(err)
	}
	f, err := sim.New(tp, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := f.Attach(at, 0)
	if err != nil {
		t.Fatal(err)
	}
	e := ibmad.NewEngine(tr, ibmad.Options{Timeout: 2 * time.Second})
	t.Cleanup(func() { e.Close() })
	p, _ := tr.Port()
	return f, e, sa.Address(p)
}

// TestSimTablesMatchTheFabric: the sim's SA tables, read through RMPP
// reassembly, hold exactly what the fabric has, computed here from the
// fabric's own nodes and ports.
func TestSimTablesMatchTheFabric(t *testing.T) {
	f, e, sm := simEngine(t, "fattree-128.net", "H0-0")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	type key struct {
		lid  uint16
		port ibmad.GUID
	}
	wantNR := map[key]string{}
	wantLinks := map[ibmad.LinkRecord]bool{}
	base := func(p *sim.Port) uint16 {
		if p.Node.IsSwitch() {
			return p.Node.Ports[0].LID
		}
		return p.LID
	}
	var switches int
	for _, n := range f.Nodes() {
		if n.IsSwitch() {
			switches++
			wantNR[key{n.Ports[0].LID, n.GUID}] = n.Desc
		}
		for _, p := range n.Ports[1:] {
			if p.Remote == nil {
				continue
			}
			if !n.IsSwitch() {
				wantNR[key{p.LID, p.GUID}] = n.Desc
			}
			wantLinks[ibmad.LinkRecord{FromLID: base(p), FromPort: p.Num, ToPort: p.Remote.Num, ToLID: base(p.Remote)}] = true
		}
	}

	nrs, err := sa.NodeRecords(ctx, e, sm)
	if err != nil {
		t.Fatal(err)
	}
	if len(nrs) != len(wantNR) {
		t.Errorf("%d NodeRecords, the fabric has %d", len(nrs), len(wantNR))
	}
	for _, r := range nrs {
		if d, ok := wantNR[key{r.LID, r.NodeInfo.PortGUID}]; !ok || d != r.NodeDescription.String() {
			t.Errorf("NodeRecord LID %d port GUID %s %q: fabric has %q", r.LID, r.NodeInfo.PortGUID, r.NodeDescription.String(), d)
		}
	}

	lrs, err := sa.LinkRecords(ctx, e, sm, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(lrs) != len(wantLinks) {
		t.Errorf("%d LinkRecords, the fabric has %d link ends", len(lrs), len(wantLinks))
	}
	for _, r := range lrs {
		if !wantLinks[r] {
			t.Errorf("LinkRecord %+v not in the fabric", r)
		}
	}

	l0, _ := f.LIDOf("L0", 0)
	lft := f.LFT("L0")
	blocks, err := sa.LFTRecords(ctx, e, sm, l0)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) == 0 || len(blocks)*ibmad.LFTBlockSize < len(lft)-ibmad.LFTBlockSize {
		t.Fatalf("%d LFT blocks for an LFT of %d LIDs", len(blocks), len(lft))
	}
	for _, b := range blocks {
		if b.LID != l0 {
			t.Errorf("LFT block of LID %d, asked for %d", b.LID, l0)
		}
		for i, port := range b.LFT {
			lid := int(b.Block)*ibmad.LFTBlockSize + i
			want := uint8(ibmad.LFTNoRoute)
			if lid < len(lft) {
				want = lft[lid]
			}
			if port != want {
				t.Errorf("L0 LID %d: LFTRecord port %d, fabric %d", lid, port, want)
			}
		}
		one, err := sa.LFTRecord(ctx, e, sm, l0, b.Block)
		if err != nil || one != b {
			t.Errorf("LFTRecord(%d, %d) = %+v, %v; the table has %+v", l0, b.Block, one, err, b)
		}
	}
	all, err := sa.LFTRecords(ctx, e, sm, 0)
	if err != nil || len(all) != switches*len(blocks) {
		t.Errorf("all LFTRecords: %d, %v; want %d switches x %d blocks", len(all), err, switches, len(blocks))
	}

	pirs, err := sa.PortInfoRecords(ctx, e, sm, l0)
	if err != nil || len(pirs) != f.Node("L0").NumPorts()+1 {
		t.Fatalf("PortInfoRecords of L0: %d, %v; want %d", len(pirs), err, f.Node("L0").NumPorts()+1)
	}
	pir, err := sa.PortInfoRecord(ctx, e, sm, l0, 3)
	if err != nil || pir.LID != l0 || pir.PortNum != 3 || pir.PortInfo.PortState != ibmad.PortStateActive {
		t.Errorf("PortInfoRecord(L0, 3) = %+v, %v", pir, err)
	}
	lr, err := sa.LinkRecordFrom(ctx, e, sm, l0, 1)
	if err != nil || !wantLinks[lr] || lr.FromLID != l0 || lr.FromPort != 1 {
		t.Errorf("LinkRecordFrom(L0, 1) = %+v, %v", lr, err)
	}
	if _, err := sa.LFTRecord(ctx, e, sm, l0, 700); !sa.IsNoRecords(err) {
		t.Errorf("LFTRecord of block 700: %v, want no records", err)
	}
	swirs, err := sa.SwitchInfoRecords(ctx, e, sm)
	if err != nil || len(swirs) != switches {
		t.Errorf("SwitchInfoRecords: %d, %v; want %d", len(swirs), err, switches)
	}
	t.Logf("%d NodeRecords, %d LinkRecords, %d LFT blocks of L0, %d of all, %d switches", len(nrs), len(lrs), len(blocks), len(all), len(swirs))
}
