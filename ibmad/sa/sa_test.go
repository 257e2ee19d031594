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

	for _, r := range nrs {
		one, err := sa.NodeRecordOf(ctx, e, sm, r.LID)
		if err != nil || one != r {
			t.Errorf("NodeRecordOf(%d) = %+v, %v; the table has %+v", r.LID, one, err, r)
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

// BenchmarkNodeRecordsTable reads the NodeRecord table of a 128-host fat
// tree through the sim's RMPP segments (152 records, 86 segments).
func BenchmarkNodeRecordsTable(b *testing.B) {
	tp, err := sim.LoadTopology(filepath.Join(topoDir, "fattree-128.net"))
	if err != nil {
		b.Fatal(err)
	}
	f, err := sim.New(tp, sim.Options{})
	if err != nil {
		b.Fatal(err)
	}
	tr, err := f.Attach("H0-0", 0)
	if err != nil {
		b.Fatal(err)
	}
	e := ibmad.NewEngine(tr, ibmad.Options{Timeout: 2 * time.Second})
	defer e.Close()
	p, _ := tr.Port()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		nrs, err := sa.NodeRecords(ctx, e, sa.Address(p))
		if err != nil || len(nrs) != 152 {
			b.Fatalf("%d records, %v", len(nrs), err)
		}
	}
}

// TestTablesOverALossyLink: with 5% of the MADs on the requester's link
// lost both ways, segment losses are recovered by the receiver's prompts
// and every table comes back whole; concurrent tables on one engine do
// not mix.
func TestTablesOverALossyLink(t *testing.T) {
	const at = "H9-3"
	f, e, sm := simEngine(t, "fattree-128.net", at)
	if f.SMNode().Name == at {
		t.Fatalf("the SM is at %s: no link to make lossy", at)
	}
	if err := f.SetDropRate(at, 1, 0.05); err != nil {
		t.Fatal(err)
	}
	leaf := f.Node(at).Ports[1].Remote
	if err := f.SetDropRate(leaf.Node.Name, int(leaf.Num), 0.05); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	type result struct {
		n   int
		err error
	}
	results := make(chan result, 8)
	for i := 0; i < 8; i++ {
		go func() {
			q := ibmad.NewSAGet(ibmad.AttrNodeRecord, 0)
			req := &ibmad.Request{Addr: sm, Timeout: 100 * time.Millisecond, Retries: 8}
			_ = q.MarshalTo(req.MAD[:])
			tab, err := e.GetTable(ctx, req, ibmad.TableRequest{Window: 8})
			results <- result{tab.Len(), err}
		}()
	}
	for i := 0; i < 8; i++ {
		r := <-results
		if r.err != nil || r.n != 152 {
			t.Errorf("table over a lossy link: %d records, %v", r.n, r.err)
		}
	}
	if ctx.Err() != nil {
		t.Fatal("tables took until the deadline")
	}
	st := e.Stats()
	if len(st.Classes) != 1 || st.Classes[0].Retries == 0 {
		t.Errorf("no segment was lost and prompted for (stats %+v): the test lost nothing", st.Classes)
	}
	t.Logf("SM at %s; engine stats: %+v", f.SMNode().Name, st.Classes)
}
