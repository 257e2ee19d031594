package trace

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// caPortsTable lists every CA port the SA knows, by base LID and node
// description, from one SubnAdmGetTable(NodeRecord) (RMPP): a handful of
// MADs where a Get per LID costs one round trip to the SA per LID (on
// the 10,240-port simulated fabric, most of `ibtracer --all
// --no-validate`'s wall time). An error (an SA without GetTable, a table
// cut short, as OpenSM's under ibsim) leaves the caller to ask LID by
// LID (AllCAPorts).
func (t *Tracer) caPortsTable(ctx context.Context, src ibmad.PortAttributes) ([]Destination, error) {
	if src.SMLID == 0 {
		return nil, errors.New("the local port knows no SM LID (is a subnet manager running?)")
	}
	q := ibmad.NewSAGet(ibmad.AttrNodeRecord, 0)
	q.Method = ibmad.MethodGetTable
	req := &ibmad.Request{Addr: ibmad.GSIAddress(src.SMLID, src.SMSL), Timeout: t.opts.Timeout, Retries: t.opts.Retries, NoRetry: t.opts.NoRetry}
	if err := q.MarshalTo(req.MAD[:]); err != nil {
		return nil, err
	}
	tbl, err := t.e.GetTable(ctx, req, ibmad.TableRequest{})
	if err != nil {
		return nil, err
	}
	seen := map[uint16]bool{}
	var ds []Destination
	for i := 0; i < tbl.Len(); i++ {
		var nr ibmad.NodeRecord
		if err := nr.UnmarshalBinary(tbl.Record(i)); err != nil {
			return nil, err
		}
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

// AllCAPorts lists the base LID of every CA port the SA knows, in LID
// order: from one NodeRecord GetTable (caPortsTable), else one
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
	src, err := t.e.Port()
	if err != nil {
		return nil, err
	}
	if ds, err := t.caPortsTable(ctx, src); err == nil {
		for _, d := range ds {
			call(found, d)
		}
		return ds, nil
	}
	return t.StreamCAPortsBySA(ctx, found)
}

// StreamCAPortsBySA is StreamCAPorts without the table: one NodeRecord
// Get per LID up to the local leaf switch's LinearFDBTop, read by SMP.
func (t *Tracer) StreamCAPortsBySA(ctx context.Context, found func(Destination)) ([]Destination, error) {
	src, err := t.e.Port()
	if err != nil {
		return nil, err
	}
	_, _, _, top, err := t.localLeaf(ctx, src) // allports_routed.go
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
		return errors.New("the local port knows no SM LID (is a subnet manager running?)")
	}
	w := t.newWalk(ctx, src, 0)
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
			resp, err := w.sa(ibmad.AttrNodeRecord, ibmad.NRCompLID, func(b []byte) {
				nr := ibmad.NodeRecord{LID: lid}
				_ = nr.MarshalTo(b)
			})
			if err != nil {
				return
			}
			answered.Add(1) // NoRecords for an unused LID is an answer too
			if resp.MAD.Status() != 0 {
				return
			}
			var nr ibmad.NodeRecord
			_ = nr.UnmarshalBinary(resp.MAD.SAData())
			if nr.NodeInfo.NodeType == ibmad.NodeTypeCA && nr.LID == lid {
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
