package trace

import (
	"errors"
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// saLinkByPort answers a LinkRecord query the SA said "no records" to
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
// (discovery.go).
func (w *walk) saLinkByPort(what string, lid uint16, port uint8, noRec error) (ibmad.LinkRecord, error) {
	recs, truncated, err := w.saLinkTable(port)
	var se *ibmad.StatusError
	if errors.As(err, &se) {
		return ibmad.LinkRecord{}, &saRecordError{what: what, limit: true, msg: fmt.Sprintf(
			"%s, and it refused the table of every port %d's links (%v)", w.maskedLIDs(lid, port), port, se)}
	}
	if err != nil {
		return ibmad.LinkRecord{}, fmt.Errorf("SA %s, asked as the table of every port %d: %w", what, port, err)
	}
	for _, r := range recs {
		if r.FromLID != lid {
			continue
		}
		if truncated {
			// The records after the last one the SA sent are whatever
			// the cut MAD held: believe a link only when its far end's
			// record leads back (a Get, or the same table).
			if err := w.saLinkBack(what, r); err != nil {
				return ibmad.LinkRecord{}, err
			}
		}
		return r, nil
	}
	if !truncated {
		return ibmad.LinkRecord{}, noRec
	}
	return ibmad.LinkRecord{}, &saRecordError{what: what, limit: true, msg: fmt.Sprintf(
		"%s, and its table of every port %d's links was cut short at %d records without it", w.maskedLIDs(lid, port), port, len(recs))}
}

// maskedLIDs says why the SA's Get of the link from (lid, port) found
// nothing: the limitation of OpenSM's LinkRecord matching, and whether
// lid is one it hits (not a multiple of 2^LMC, the local port's LMC
// standing for the subnet's).
func (w *walk) maskedLIDs(lid uint16, port uint8) string {
	s := fmt.Sprintf("the SA matches LinkRecord LIDs against LMC-aligned base LIDs and knows no link from LID %d port %d that way", lid, port)
	if lmc := w.src.LMC & 7; lmc > 0 && lid%(1<<lmc) != 0 {
		s += fmt.Sprintf(" (LID %d is not a multiple of 2^LMC = %d)", lid, 1<<lmc)
	}
	return s
}

// saLinkBack checks that the link r's far end leads back to r's near end.
func (w *walk) saLinkBack(what string, r ibmad.LinkRecord) error {
	back, err := saGet(w, what+" (its far end)", ibmad.AttrLinkRecord, r.ToLID, uint32(r.ToPort),
		ibmad.LRCompFromLID|ibmad.LRCompFromPort, ibmad.LinkRecord{FromLID: r.ToLID, FromPort: r.ToPort})
	if isNoRecords(err) {
		var recs []ibmad.LinkRecord
		recs, _, err = w.saLinkTable(r.ToPort)
		back = ibmad.LinkRecord{}
		for _, b := range recs {
			if b.FromLID == r.ToLID {
				back = b
			}
		}
	}
	if err != nil {
		return err
	}
	if back.ToLID != r.FromLID || back.ToPort != r.FromPort {
		return &saRecordError{what: what, limit: true, msg: fmt.Sprintf(
			"the SA's table of every port %d's links was cut short, and its link from LID %d port %d to LID %d port %d does not lead back",
			r.FromPort, r.FromLID, r.FromPort, r.ToLID, r.ToPort)}
	}
	return nil
}

// saLinkTable reads the LinkRecords of every node's port port with one
// SubnAdmGetTable and keeps each in the SA cache under the (FromLID,
// FromPort) it answers. truncated: the answer was cut short (its last
// records may be noise, so none is cached).
func (w *walk) saLinkTable(port uint8) (recs []ibmad.LinkRecord, truncated bool, err error) {
	if w.src.SMLID == 0 {
		return nil, false, errors.New("the local port knows no SM LID (is a subnet manager running?)")
	}
	q := ibmad.NewSAGet(ibmad.AttrLinkRecord, ibmad.LRCompFromPort)
	q.Method = ibmad.MethodGetTable
	_ = (&ibmad.LinkRecord{FromPort: port}).MarshalTo(q.Data[:])
	req := &ibmad.Request{Addr: ibmad.GSIAddress(w.src.SMLID, w.src.SMSL), Timeout: w.t.opts.Timeout, Retries: w.t.opts.Retries, NoRetry: w.t.opts.NoRetry}
	_ = q.MarshalTo(req.MAD[:])
	w.saReqs.Add(1)
	w.t.saRequests.count(ibmad.AttrLinkRecord)
	tbl, err := w.t.e.GetTable(w.ctx, req, ibmad.TableRequest{})
	w.mads.Add(1)
	truncated = errors.Is(err, ibmad.ErrTableTruncated)
	var se *ibmad.StatusError
	if errors.As(err, &se) && se.Status.ClassSpecific() == ibmad.SAStatusNoRecords {
		return nil, false, nil // no link on that port anywhere
	}
	if err != nil && !truncated {
		return nil, false, err
	}
	for i := 0; i < tbl.Len(); i++ {
		var r ibmad.LinkRecord
		b := tbl.Record(i)
		if r.UnmarshalBinary(b) != nil || r.FromPort != port || r.FromLID == 0 || r.FromLID >= 0xC000 {
			continue
		}
		recs = append(recs, r)
		if !truncated && w.t.opts.SARecordTTL > 0 {
			w.t.recs.Put(saKey{ibmad.AttrLinkRecord, r.FromLID, uint32(port)}, append([]byte(nil), b...))
		}
	}
	return recs, truncated, nil
}
