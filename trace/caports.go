package trace

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sa"
)

// Listing the CA ports (`ibtracer --all`; docs/architecture.md, "Listing
// the CA ports"): from the SA's NodeRecord table when it hands it over
// whole, else from the fabric's own forwarding. Asking the SA one LID at
// a time costs a round trip to the SA per LID, so the LIDs the local
// switch forwards are walked instead, and the walks, which the traces
// need anyway, say which LIDs are CA ports (CAPortOf): the SA is asked
// only of the LIDs the switch does not forward and of those whose walk
// failed (CAPortsAt).

// ErrSAOnly: the tracer reads SA records, not SMPs (SA-only discovery,
// or auto mode after SMPs were refused), so LocalForwarding sends none.
var ErrSAOnly = errors.New("SA-only discovery reads no forwarding table by SMP")

// saConcurrency bounds the SA queries one tracer has in flight.
const saConcurrency = 4

// errNoSMLID: the local port knows no SA to ask.
var errNoSMLID = errors.New("the local port knows no SM LID (is a subnet manager running?)")

// AllCAPorts lists the base LID of every CA port the SA knows, in LID
// order: from one NodeRecord GetTable (CAPortsTable), else one
// NodeRecord Get per LID up to the local leaf switch's LinearFDBTop, a
// few at once (StreamCAPorts).
func (t *Tracer) AllCAPorts(ctx context.Context) ([]Destination, error) {
	return t.StreamCAPorts(ctx, nil)
}

// StreamCAPorts lists what AllCAPorts lists and, before it returns,
// calls found (when not nil) once for each CA port as soon as the SA
// has named it, so that `ibtracer --all` traces a port while the SA is
// still asked for the next ones (docs/architecture.md, "Facts shared by
// a run"). Calls to found do not overlap; asked LID by LID, they come in
// the order the SA answers, roughly LID order; from the table, in LID
// order once it is whole. A listing that fails (the SA answered none of
// its queries) has called found for no port.
func (t *Tracer) StreamCAPorts(ctx context.Context, found func(Destination)) ([]Destination, error) {
	if ds, err := t.CAPortsTable(ctx); err == nil {
		for _, d := range ds {
			call(found, d)
		}
		return ds, nil
	} else if _, perr := t.e.Port(); perr != nil {
		return nil, perr
	}
	return t.StreamCAPortsBySA(ctx, found)
}

// CAPortsTable lists every CA port the SA knows, by base LID and node
// description, in LID order, from one SubnAdmGetTable(NodeRecord)
// (RMPP): a handful of MADs where a Get per LID costs one round trip to
// the SA per LID (on the 10,240-port simulated fabric, most of `ibtracer
// --all --no-validate`'s wall time). An error when the SA cannot give
// the table whole (an SA without GetTable, a table cut short, as
// OpenSM's under ibsim).
func (t *Tracer) CAPortsTable(ctx context.Context) ([]Destination, error) {
	src, err := t.e.Port()
	if err != nil {
		return nil, err
	}
	if src.SMLID == 0 {
		return nil, errNoSMLID
	}
	recs, err := sa.NodeRecords(ctx, newSender(t.e, &t.opts), sa.Address(src))
	if err != nil {
		return nil, err
	}
	seen := map[uint16]bool{}
	var ds []Destination
	for _, nr := range recs {
		if nr.NodeInfo.NodeType != ibmad.NodeTypeCA || nr.LID == 0 || nr.LID >= 0xC000 || seen[nr.LID] {
			continue
		}
		seen[nr.LID] = true
		ds = append(ds, Destination{LID: nr.LID, Name: nr.NodeDescription.String()})
	}
	if len(ds) == 0 {
		return nil, errors.New("the SA's NodeRecord table holds no CA port")
	}
	slices.SortFunc(ds, func(a, b Destination) int { return int(a.LID) - int(b.LID) })
	return ds, nil
}

// StreamCAPortsBySA is StreamCAPorts without the table: one NodeRecord
// Get per LID up to the local leaf switch's LinearFDBTop, read by SMP.
func (t *Tracer) StreamCAPortsBySA(ctx context.Context, found func(Destination)) ([]Destination, error) {
	src, err := t.e.Port()
	if err != nil {
		return nil, err
	}
	_, _, _, top, err := t.localLeaf(ctx, src)
	if err != nil {
		return nil, err
	}
	lids := make([]uint16, top)
	for i := range lids {
		lids[i] = uint16(i + 1)
	}
	out := make([]Destination, int(top)+1)
	if err := t.CAPortsAt(ctx, lids, func(d Destination) { out[d.LID] = d; call(found, d) }); err != nil {
		return nil, err
	}
	var ds []Destination
	for _, d := range out {
		if d.LID != 0 {
			ds = append(ds, d)
		}
	}
	return ds, nil
}

// call calls found with d unless found is nil.
func call(found func(Destination), d Destination) {
	if found != nil {
		found(d)
	}
}

// CAPortsAt asks the SA, one NodeRecord Get per LID and a few at once,
// which of lids are the base LID of a CA port, and calls found (when
// not nil) for each as the SA names it; calls to found do not overlap.
// It fails when the SA answered none of its queries (an answer of no
// record is an answer).
func (t *Tracer) CAPortsAt(ctx context.Context, lids []uint16, found func(Destination)) error {
	if len(lids) == 0 {
		return nil
	}
	src, err := t.e.Port()
	if err != nil {
		return err
	}
	if src.SMLID == 0 {
		return errNoSMLID
	}
	s := newSender(t.e, &t.opts)
	var answered atomic.Int32
	var foundMu sync.Mutex
	// Gently: the SA is one process serving the whole subnet (OpenSM under
	// ibsim was seen to die under 64 queries at once).
	sem := make(chan struct{}, saConcurrency)
	var wg sync.WaitGroup
	for _, lid := range lids {
		wg.Add(1)
		sem <- struct{}{}
		go func(lid uint16) {
			defer wg.Done()
			defer func() { <-sem }()
			nr, err := sa.NodeRecordOf(ctx, s, sa.Address(src), lid)
			var se *ibmad.StatusError
			if err != nil && !errors.As(err, &se) {
				return
			}
			answered.Add(1) // NoRecords for an unused LID is an answer too
			if err == nil && nr.NodeInfo.NodeType == ibmad.NodeTypeCA && nr.LID == lid {
				foundMu.Lock()
				call(found, Destination{LID: lid, Name: nr.NodeDescription.String()})
				foundMu.Unlock()
			}
		}(lid)
	}
	wg.Wait()
	if answered.Load() == 0 {
		return fmt.Errorf("the SA at LID %d answered none of %d NodeRecord queries", src.SMLID, len(lids))
	}
	return nil
}

// LocalForwarding reads the linear forwarding table of the local switch
// (a CA port's: the switch its port is cabled to) up to its
// LinearFDBTop, and splits LIDs 1..top into those it forwards (any
// entry but 255, its own LID's port 0 included) and those it does not.
// Its SMPs are facts the traces share (facts.go). SA-only discovery
// sends no SMP: it fails then.
func (t *Tracer) LocalForwarding(ctx context.Context) (routed, unrouted []uint16, err error) {
	if t.sa.use() {
		return nil, nil, ErrSAOnly
	}
	src, err := t.e.Port()
	if err != nil {
		return nil, nil, err
	}
	w, path, ni, top, err := t.localLeaf(ctx, src)
	if err != nil {
		return nil, nil, err
	}
	blocks := make([]*ibmad.LFTBlock, ibmad.LFTBlockOf(top)+1)
	errs := make([]error, len(blocks))
	var wg sync.WaitGroup
	for b := range blocks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			blocks[b], errs[b] = w.lftBlock(ni.NodeGUID, path, uint32(b))
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, nil, fmt.Errorf("forwarding table of the local leaf switch: %w", err)
	}
	for lid := uint16(1); lid <= top && lid < ibmad.MLIDBase; lid++ {
		if blocks[ibmad.LFTBlockOf(lid)].Port(lid) == ibmad.LFTNoRoute {
			unrouted = append(unrouted, lid)
		} else {
			routed = append(routed, lid)
		}
	}
	return routed, unrouted, nil
}

// localLeaf reads, by directed route, the switch the local port is
// cabled to (the local node itself when it is a switch): the walk that
// read it, its route, its NodeInfo and its LinearFDBTop, read afresh.
func (t *Tracer) localLeaf(ctx context.Context, src ibmad.PortAttributes) (*walk, ibmad.DRPath, ibmad.NodeInfo, uint16, error) {
	w := newWalk(t, ctx, src, 0)
	// The local node first, as every trace's walk begins (one flight with
	// theirs: where SMPs are refused, the refusal is met once).
	ni, _, err := w.nodeInfo(ibmad.DRPath{})
	if err != nil {
		return nil, nil, ni, 0, fmt.Errorf("the local node: %w", err)
	}
	path := ibmad.DRPath{}
	if src.NodeType != ibmad.NodeTypeSwitch {
		path = ibmad.DRPath{src.PortNum}
		if ni, _, err = w.nodeInfo(path); err != nil {
			return nil, nil, ni, 0, fmt.Errorf("the local leaf switch: %w", err)
		}
	}
	if ni.NodeType != ibmad.NodeTypeSwitch {
		return nil, nil, ni, 0, fmt.Errorf("the local port is cabled to a %s, not a switch", ni.NodeType)
	}
	top, err := w.switchTop(ni.NodeGUID, path, true)
	if err != nil {
		return nil, nil, ni, 0, fmt.Errorf("SwitchInfo of the local leaf switch: %w", err)
	}
	if top == 0 {
		return nil, nil, ni, 0, errors.New("the local leaf switch forwards no LID (LinearFDBTop 0: has a subnet manager programmed it?)")
	}
	return w, path, ni, top, nil
}

// CAPortOf says whether r, a trace to a LID, shows that LID to be the
// base LID of a CA port: its walk ended at a CA port whose LID it is
// (whatever the validation found). It returns the destination as a
// listing names it, with the node's description.
func CAPortOf(r *Result) (Destination, bool) {
	if len(r.Hops) == 0 || (r.Status != StatusOK && r.Status != StatusMismatch) {
		return Destination{}, false
	}
	last := &r.Hops[len(r.Hops)-1]
	if last.NodeType != ibmad.NodeTypeCA || last.LID != r.DLID {
		return Destination{}, false
	}
	return Destination{LID: r.DLID, Name: last.NodeDesc}, true
}
