package trace

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// Listing the CA ports from the fabric's own forwarding (docs/architecture.md,
// "Listing the CA ports"): when the SA cannot hand its NodeRecord table
// over whole, asking it one LID at a time costs a round trip to the SA per
// LID. The LIDs the local switch forwards are walked instead, and the
// walks, which the traces need anyway, say which LIDs are CA ports: the
// SA is asked only of the LIDs the switch does not forward and of those
// whose walk failed.

// ErrSAOnly: the tracer reads SA records, not SMPs (SA-only discovery,
// or auto mode after SMPs were refused), so LocalForwarding sends none.
var ErrSAOnly = errors.New("SA-only discovery reads no forwarding table by SMP")

// CAPortsTable lists every CA port the SA knows, in LID order, from one
// NodeRecord GetTable; an error when the SA cannot give the table whole
// (an SA without GetTable, a table cut short, as OpenSM's under ibsim).
func (t *Tracer) CAPortsTable(ctx context.Context) ([]Destination, error) {
	src, err := t.e.Port()
	if err != nil {
		return nil, err
	}
	return t.caPortsTable(ctx, src)
}

// LocalForwarding reads the linear forwarding table of the local switch
// (a CA port's: the switch its port is cabled to) up to its
// LinearFDBTop, and splits LIDs 1..top into those it forwards (any
// entry but 255, its own LID's port 0 included) and those it does not.
// Its SMPs are facts the traces share (facts.go). SA-only discovery
// sends no SMP: it fails then.
func (t *Tracer) LocalForwarding(ctx context.Context) (routed, unrouted []uint16, err error) {
	if t.useSA() {
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
	w := t.newWalk(ctx, src, 0)
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
