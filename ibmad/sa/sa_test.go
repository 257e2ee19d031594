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
	r := &tablesRig{t: t, ctx: ctx, f: f, e: e, sm: sm, want: fabricWantOf(f)}

	nrs := r.nodeRecords()
	lrs := r.linkRecords()
	l0, _ := f.LIDOf("L0", 0)
	blocks := r.lftRecords(l0)
	all, err := sa.LFTRecords(ctx, e, sm, 0)
	if err != nil || len(all) != r.want.switches*len(blocks) {
		t.Errorf("all LFTRecords: %d, %v; want %d switches x %d blocks", len(all), err, r.want.switches, len(blocks))
	}
	swirs := r.singleRecords(l0)
	t.Logf("%d NodeRecords, %d LinkRecords, %d LFT blocks of L0, %d of all, %d switches", len(nrs), len(lrs), len(blocks), len(all), len(swirs))
}

// nodeKey is a NodeRecord's identity: the LID and the port GUID.
type nodeKey struct {
	lid  uint16
	port ibmad.GUID
}

// fabricWant is what the SA tables should hold, from the fabric itself.
type fabricWant struct {
	nodes    map[nodeKey]string // NodeRecords: node description by LID and port
	links    map[ibmad.LinkRecord]bool
	switches int
}

// fabricWantOf reads the NodeRecords and LinkRecords f should answer:
// one NodeRecord per switch (port 0) and per connected CA port, one
// LinkRecord per connected link end (a switch's by its port 0's LID).
func fabricWantOf(f *sim.Fabric) fabricWant {
	w := fabricWant{nodes: map[nodeKey]string{}, links: map[ibmad.LinkRecord]bool{}}
	base := func(p *sim.Port) uint16 {
		if p.Node.IsSwitch() {
			return p.Node.Ports[0].LID
		}
		return p.LID
	}
	for _, n := range f.Nodes() {
		if n.IsSwitch() {
			w.switches++
			w.nodes[nodeKey{n.Ports[0].LID, n.GUID}] = n.Desc
		}
		for _, p := range n.Ports[1:] {
			if p.Remote == nil {
				continue
			}
			if !n.IsSwitch() {
				w.nodes[nodeKey{p.LID, p.GUID}] = n.Desc
			}
			w.links[ibmad.LinkRecord{FromLID: base(p), FromPort: p.Num, ToPort: p.Remote.Num, ToLID: base(p.Remote)}] = true
		}
	}
	return w
}

// tablesRig reads the SA tables of a simulated fabric from one engine.
type tablesRig struct {
	t    *testing.T
	ctx  context.Context
	f    *sim.Fabric
	e    *ibmad.Engine
	sm   ibmad.Address
	want fabricWant
}

// nodeRecords checks the NodeRecord table against the fabric, and each
// record against the one NodeRecordOf returns.
func (r *tablesRig) nodeRecords() []ibmad.NodeRecord {
	t := r.t
	nrs, err := sa.NodeRecords(r.ctx, r.e, r.sm)
	if err != nil {
		t.Fatal(err)
	}
	if len(nrs) != len(r.want.nodes) {
		t.Errorf("%d NodeRecords, the fabric has %d", len(nrs), len(r.want.nodes))
	}
	for _, nr := range nrs {
		if d, ok := r.want.nodes[nodeKey{nr.LID, nr.NodeInfo.PortGUID}]; !ok || d != nr.NodeDescription.String() {
			t.Errorf("NodeRecord LID %d port GUID %s %q: fabric has %q", nr.LID, nr.NodeInfo.PortGUID, nr.NodeDescription.String(), d)
		}
	}
	for _, nr := range nrs {
		one, err := sa.NodeRecordOf(r.ctx, r.e, r.sm, nr.LID)
		if err != nil || one != nr {
			t.Errorf("NodeRecordOf(%d) = %+v, %v; the table has %+v", nr.LID, one, err, nr)
		}
	}
	return nrs
}

// linkRecords checks the LinkRecord table against the fabric's links.
func (r *tablesRig) linkRecords() []ibmad.LinkRecord {
	t := r.t
	lrs, err := sa.LinkRecords(r.ctx, r.e, r.sm, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(lrs) != len(r.want.links) {
		t.Errorf("%d LinkRecords, the fabric has %d link ends", len(lrs), len(r.want.links))
	}
	for _, lr := range lrs {
		if !r.want.links[lr] {
			t.Errorf("LinkRecord %+v not in the fabric", lr)
		}
	}
	return lrs
}

// lftRecords checks switch L0's (at lid) LFT blocks against its table in
// the fabric, and each block against the one LFTRecord returns.
func (r *tablesRig) lftRecords(lid uint16) []ibmad.LFTRecord {
	t := r.t
	lft := r.f.LFT("L0")
	blocks, err := sa.LFTRecords(r.ctx, r.e, r.sm, lid)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) == 0 || len(blocks)*ibmad.LFTBlockSize < len(lft)-ibmad.LFTBlockSize {
		t.Fatalf("%d LFT blocks for an LFT of %d LIDs", len(blocks), len(lft))
	}
	for _, b := range blocks {
		if b.LID != lid {
			t.Errorf("LFT block of LID %d, asked for %d", b.LID, lid)
		}
		checkLFTBlock(t, b, lft)
		one, err := sa.LFTRecord(r.ctx, r.e, r.sm, lid, b.Block)
		if err != nil || one != b {
			t.Errorf("LFTRecord(%d, %d) = %+v, %v; the table has %+v", lid, b.Block, one, err, b)
		}
	}
	return blocks
}

// checkLFTBlock compares one LFT block with the fabric's lft (LIDs past
// its end: no route).
func checkLFTBlock(t *testing.T, b ibmad.LFTRecord, lft []uint8) {
	t.Helper()
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
}

// singleRecords checks the queries of one record (PortInfo, a link from
// a port, an LFT block past the end) and the SwitchInfo table, for switch
// L0 at lid.
func (r *tablesRig) singleRecords(lid uint16) []ibmad.SwitchInfoRecord {
	t, ctx, e, sm := r.t, r.ctx, r.e, r.sm
	pirs, err := sa.PortInfoRecords(ctx, e, sm, lid)
	if err != nil || len(pirs) != r.f.Node("L0").NumPorts()+1 {
		t.Fatalf("PortInfoRecords of L0: %d, %v; want %d", len(pirs), err, r.f.Node("L0").NumPorts()+1)
	}
	pir, err := sa.PortInfoRecord(ctx, e, sm, lid, 3)
	if err != nil || pir.LID != lid || pir.PortNum != 3 || pir.PortInfo.PortState != ibmad.PortStateActive {
		t.Errorf("PortInfoRecord(L0, 3) = %+v, %v", pir, err)
	}
	lr, err := sa.LinkRecordFrom(ctx, e, sm, lid, 1)
	if err != nil || !r.want.links[lr] || lr.FromLID != lid || lr.FromPort != 1 {
		t.Errorf("LinkRecordFrom(L0, 1) = %+v, %v", lr, err)
	}
	if _, err := sa.LFTRecord(ctx, e, sm, lid, 700); !sa.IsNoRecords(err) {
		t.Errorf("LFTRecord of block 700: %v, want no records", err)
	}
	swirs, err := sa.SwitchInfoRecords(ctx, e, sm)
	if err != nil || len(swirs) != r.want.switches {
		t.Errorf("SwitchInfoRecords: %d, %v; want %d", len(swirs), err, r.want.switches)
	}
	return swirs
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
