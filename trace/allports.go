package trace

import (
	"context"
	"errors"
	"slices"

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
	req := &ibmad.Request{Addr: ibmad.GSIAddress(src.SMLID, src.SMSL), Timeout: t.opts.Timeout, Retries: t.opts.requestRetries()}
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
