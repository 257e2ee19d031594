package trace

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sa"
)

// The SA records a trace in SA mode reads (docs/protocol.md, "SA-only
// discovery"), each with one SubnAdmGet of ibmad/sa that matches exactly
// one record: no GetTable, so no RMPP (ibsim cuts a table to its first
// MAD), but for the links of a port that a LID cannot name (linkByPort).
// The records are kept for Options.SARecordTTL, shared by every
// destination's traces. The oracle test on OpenSM
// (cmd/ibtracer/sa_ibsim_test.go) checks every query on the wire.

// saLink is a LinkRecord: the far end of (FromLID, FromPort).
type saLink struct {
	toLID  uint16
	toPort uint8
}

// saNode is what a NodeRecord says about the node owning a LID.
type saNode struct {
	ni   ibmad.NodeInfo
	lid  uint16 // the record's LID: the base LID of the port
	desc string
}

// saPort is what a PortInfoRecord says about one port.
type saPort struct {
	lid   uint16
	lmc   uint8
	state ibmad.PortState
}

// saKey names a record by the LID and number (port or block) it is asked by.
type saKey struct {
	attr ibmad.AttrID
	lid  uint16
	n    uint32
}

// saRecordError is an SA that answered a record query with an error
// status, or with a record that is not the one asked for.
type saRecordError struct {
	what  string
	st    ibmad.Status
	msg   string
	limit bool // the SA cannot answer this question (linkByPort)
}

// isNoRecords says whether err is the SA's "no records" status.
func isNoRecords(err error) bool {
	var re *saRecordError
	return errors.As(err, &re) && re.st.ClassSpecific() == ibmad.SAStatusNoRecords
}

// isSALimit says whether err is a question the SA cannot answer.
func isSALimit(err error) bool {
	var re *saRecordError
	return errors.As(err, &re) && re.limit
}

func (e *saRecordError) Error() string {
	if e.msg != "" {
		return fmt.Sprintf("SA %s: %s", e.what, e.msg)
	}
	s := e.st.String()
	if cs := e.st.ClassSpecific(); cs != 0 {
		s = ibmad.SAStatusString(cs)
	}
	return fmt.Sprintf("SA %s: %s", e.what, s)
}

// saGet returns the record k names: kept, or asked with fetch through
// the walk's sender and kept. An error status is a *saRecordError.
func saGet[T any](r *saReader, w *walk, what string, k saKey,
	fetch func(ctx context.Context, s sa.Sender, sm ibmad.Address) (T, error)) (T, error) {
	var rec T
	if v, ok := r.recs.Get(k); ok {
		if rec, ok := v.(T); ok {
			return rec, nil
		}
	}
	if w.src.SMLID == 0 {
		return rec, &saRecordError{what: what, msg: "the local port knows no SM LID (is a subnet manager running?)"}
	}
	w.saReqs.Add(1)
	r.requests.count(k.attr)
	rec, err := fetch(w.ctx, w.snd, sa.Address(w.src))
	if se := (*ibmad.StatusError)(nil); errors.As(err, &se) {
		return rec, &saRecordError{what: what, st: se.Status}
	}
	if err != nil {
		return rec, fmt.Errorf("SA %s: %w", what, err)
	}
	if r.ttl > 0 {
		r.recs.Put(k, rec)
	}
	return rec, nil
}

// linkRecord is the LinkRecord from (lid, port), kept or asked.
func (r *saReader) linkRecord(w *walk, what string, lid uint16, port uint8) (ibmad.LinkRecord, error) {
	return saGet(r, w, what, saKey{ibmad.AttrLinkRecord, lid, uint32(port)},
		func(ctx context.Context, s sa.Sender, sm ibmad.Address) (ibmad.LinkRecord, error) {
			return sa.LinkRecordFrom(ctx, s, sm, lid, port)
		})
}

// linkFrom is the far end of the link from (lid, port).
func (r *saReader) linkFrom(w *walk, lid uint16, port uint8) (saLink, error) {
	what := fmt.Sprintf("LinkRecord from LID %d port %d", lid, port)
	lr, err := r.linkRecord(w, what, lid, port)
	if isNoRecords(err) {
		// OpenSM masks the LIDs of a LinkRecord query with the subnet's
		// LMC: a switch LID that is not LMC-aligned never matches. Ask
		// for the links of every node's port instead (linkByPort).
		lr, err = r.linkByPort(w, what, lid, port, err)
	}
	if err != nil {
		return saLink{}, err
	}
	if lr.FromLID != lid || lr.FromPort != port {
		return saLink{}, &saRecordError{what: what, msg: fmt.Sprintf("answered the link from LID %d port %d", lr.FromLID, lr.FromPort)}
	}
	l := saLink{toLID: lr.ToLID, toPort: lr.ToPort}
	if l.toLID == 0 || l.toLID >= 0xC000 {
		return saLink{}, &saRecordError{what: what, msg: fmt.Sprintf("the far end has LID %d", l.toLID)}
	}
	return l, nil
}

// nodeAt is the node owning lid.
func (r *saReader) nodeAt(w *walk, lid uint16) (saNode, error) {
	what := fmt.Sprintf("NodeRecord of LID %d", lid)
	nr, err := saGet(r, w, what, saKey{ibmad.AttrNodeRecord, lid, 0},
		func(ctx context.Context, s sa.Sender, sm ibmad.Address) (ibmad.NodeRecord, error) {
			return sa.NodeRecordOf(ctx, s, sm, lid)
		})
	if err != nil {
		return saNode{}, err
	}
	if nr.NodeInfo.NodeGUID == 0 || nr.LID == 0 {
		return saNode{}, &saRecordError{what: what, msg: "the record has no node GUID or LID"}
	}
	n := saNode{ni: nr.NodeInfo, lid: nr.LID, desc: nr.NodeDescription.String()}
	w.t.desc.Put(n.ni.NodeGUID, n.desc)
	return n, nil
}

// portInfo is what the SA says of port port at lid.
func (r *saReader) portInfo(w *walk, lid uint16, port uint8) (saPort, error) {
	what := fmt.Sprintf("PortInfoRecord of LID %d port %d", lid, port)
	pir, err := saGet(r, w, what, saKey{ibmad.AttrPortInfoRecord, lid, uint32(port)},
		func(ctx context.Context, s sa.Sender, sm ibmad.Address) (ibmad.PortInfoRecord, error) {
			return sa.PortInfoRecord(ctx, s, sm, lid, port)
		})
	if err != nil {
		return saPort{}, err
	}
	if pir.PortNum != port {
		return saPort{}, &saRecordError{what: what, msg: fmt.Sprintf("answered port %d", pir.PortNum)}
	}
	pi := &pir.PortInfo
	return saPort{lid: pi.LID, lmc: pi.LMC, state: pi.PortState}, nil
}

// lftBlock is block block of the LFT of the switch at lid.
func (r *saReader) lftBlock(w *walk, lid uint16, block uint32) (*ibmad.LFTBlock, error) {
	what := fmt.Sprintf("LinearForwardingTableRecord of LID %d block %d", lid, block)
	rec, err := saGet(r, w, what, saKey{ibmad.AttrLFTRecord, lid, block},
		func(ctx context.Context, s sa.Sender, sm ibmad.Address) (ibmad.LFTRecord, error) {
			return sa.LFTRecord(ctx, s, sm, lid, uint16(block))
		})
	if err != nil {
		return nil, err
	}
	if rec.LID != lid || uint32(rec.Block) != block {
		return nil, &saRecordError{what: what, msg: fmt.Sprintf("answered LID %d block %d", rec.LID, rec.Block)}
	}
	return &rec.LFT, nil
}

// saCounter counts the SA record requests of a tracer, by record.
type saCounter struct {
	lft, link, node, port atomic.Int64
}

func (c *saCounter) count(attr ibmad.AttrID) {
	switch attr {
	case ibmad.AttrLFTRecord:
		c.lft.Add(1)
	case ibmad.AttrLinkRecord:
		c.link.Add(1)
	case ibmad.AttrNodeRecord:
		c.node.Add(1)
	case ibmad.AttrPortInfoRecord:
		c.port.Add(1)
	}
}

// byName is the counts by record name (Tracer.SARequests).
func (c *saCounter) byName() map[string]uint64 {
	return map[string]uint64{
		"LinearForwardingTableRecord": uint64(c.lft.Load()),
		"LinkRecord":                  uint64(c.link.Load()),
		"NodeRecord":                  uint64(c.node.Load()),
		"PortInfoRecord":              uint64(c.port.Load()),
	}
}

// linkByPort answers a LinkRecord query the SA said "no records" to
// (noRec) from the table of the links leaving port port of every node,
// filtered here (docs/protocol.md, "SA-only discovery"). OpenSM compares
// a LinkRecord query's FromLID with the port's base LID after masking it
// with the subnet's LMC, so it never matches a switch whose port-0 LID is
// not a multiple of 2^LMC; a query by FromPort alone names no LID and is
// answered. Every link of the table is kept in the SA cache, so one table
// serves every switch of the fabric on that port. A table that has no
// link from lid, and came whole, confirms noRec; one cut short (ibsim's
// libumad2sim sends only its first MAD), or a table the SA refuses (an
// error status: an SA that serves no tables), fails with the SA's
// limitation (isSALimit), which auto mode answers with SMPs
// (Tracer.discoverTrace).
func (r *saReader) linkByPort(w *walk, what string, lid uint16, port uint8, noRec error) (ibmad.LinkRecord, error) {
	recs, truncated, err := r.linkTable(w, port)
	var se *ibmad.StatusError
	if errors.As(err, &se) {
		return ibmad.LinkRecord{}, &saRecordError{what: what, limit: true, msg: fmt.Sprintf(
			"%s, and it refused the table of every port %d's links (%v)", maskedLIDs(w.src, lid, port), port, se)}
	}
	if err != nil {
		return ibmad.LinkRecord{}, fmt.Errorf("SA %s, asked as the table of every port %d: %w", what, port, err)
	}
	for _, rec := range recs {
		if rec.FromLID != lid {
			continue
		}
		if truncated {
			// The records after the last one the SA sent are whatever
			// the cut MAD held: believe a link only when its far end's
			// record leads back (a Get, or the same table).
			if err := r.linkBack(w, what, rec); err != nil {
				return ibmad.LinkRecord{}, err
			}
		}
		return rec, nil
	}
	if !truncated {
		return ibmad.LinkRecord{}, noRec
	}
	return ibmad.LinkRecord{}, &saRecordError{what: what, limit: true, msg: fmt.Sprintf(
		"%s, and its table of every port %d's links was cut short at %d records without it", maskedLIDs(w.src, lid, port), port, len(recs))}
}

// maskedLIDs says why the SA's Get of the link from (lid, port) found
// nothing: the limitation of OpenSM's LinkRecord matching, and whether
// lid is one it hits (not a multiple of 2^LMC, the local port's LMC
// standing for the subnet's).
func maskedLIDs(src ibmad.PortAttributes, lid uint16, port uint8) string {
	s := fmt.Sprintf("the SA matches LinkRecord LIDs against LMC-aligned base LIDs and knows no link from LID %d port %d that way", lid, port)
	if lmc := src.LMC & 7; lmc > 0 && lid%(1<<lmc) != 0 {
		s += fmt.Sprintf(" (LID %d is not a multiple of 2^LMC = %d)", lid, 1<<lmc)
	}
	return s
}

// linkBack checks that the link l's far end leads back to l's near end.
func (r *saReader) linkBack(w *walk, what string, l ibmad.LinkRecord) error {
	back, err := r.linkRecord(w, what+" (its far end)", l.ToLID, l.ToPort)
	if isNoRecords(err) {
		var recs []ibmad.LinkRecord
		recs, _, err = r.linkTable(w, l.ToPort)
		back = ibmad.LinkRecord{}
		for _, b := range recs {
			if b.FromLID == l.ToLID {
				back = b
			}
		}
	}
	if err != nil {
		return err
	}
	if back.ToLID != l.FromLID || back.ToPort != l.FromPort {
		return &saRecordError{what: what, limit: true, msg: fmt.Sprintf(
			"the SA's table of every port %d's links was cut short, and its link from LID %d port %d to LID %d port %d does not lead back",
			l.FromPort, l.FromLID, l.FromPort, l.ToLID, l.ToPort)}
	}
	return nil
}

// linkTable reads the LinkRecords of every node's port port with one
// SubnAdmGetTable and keeps each in the SA cache under the (FromLID,
// FromPort) it answers. truncated: the answer was cut short (its last
// records may be noise, so none is kept).
func (r *saReader) linkTable(w *walk, port uint8) (recs []ibmad.LinkRecord, truncated bool, err error) {
	if w.src.SMLID == 0 {
		return nil, false, errNoSMLID
	}
	w.saReqs.Add(1)
	r.requests.count(ibmad.AttrLinkRecord)
	tbl, err := sa.GetTable(w.ctx, w.snd, sa.Address(w.src), ibmad.AttrLinkRecord, ibmad.LRCompFromPort, wire(&ibmad.LinkRecord{FromPort: port}))
	truncated = errors.Is(err, ibmad.ErrTableTruncated)
	if sa.IsNoRecords(err) {
		return nil, false, nil // no link on that port anywhere
	}
	if err != nil && !truncated {
		return nil, false, err
	}
	for i := 0; i < tbl.Len(); i++ {
		var rec ibmad.LinkRecord
		if rec.UnmarshalBinary(tbl.Record(i)) != nil || rec.FromPort != port || rec.FromLID == 0 || rec.FromLID >= 0xC000 {
			continue
		}
		recs = append(recs, rec)
		if !truncated && r.ttl > 0 {
			r.recs.Put(saKey{ibmad.AttrLinkRecord, rec.FromLID, uint32(port)}, rec)
		}
	}
	return recs, truncated, nil
}
