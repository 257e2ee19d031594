package trace

import (
	"errors"
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// The SA records a trace in SA mode reads (docs/protocol.md, "SA-only
// discovery"), each with one SubnAdmGet that matches exactly one record:
// no GetTable, so no RMPP (ibsim cuts a table to its first MAD). The
// records' codecs, attribute IDs and component mask bits are ibmad's
// (ibmad/sarecords.go, checked against OpenSM's headers); the oracle test
// on OpenSM (cmd/ibtracer/sa_ibsim_test.go) checks every query on the wire.

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
	limit bool // the SA cannot answer this question (salinks.go)
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

// saRecord sends one SubnAdmGet and returns the record's bytes. Records
// are kept in the tracer's SA cache (Options.SARecordTTL), shared by
// every destination's traces.
func (w *walk) saRecord(what string, attr ibmad.AttrID, lid uint16, n uint32, mask uint64, fill func([]byte)) ([]byte, error) {
	k := saKey{attr, lid, n}
	if b, ok := w.t.recs.Get(k); ok {
		return b, nil
	}
	if w.src.SMLID == 0 {
		return nil, &saRecordError{what: what, msg: "the local port knows no SM LID (is a subnet manager running?)"}
	}
	w.saReqs.Add(1)
	w.t.saRequests.count(attr)
	resp, err := w.sa(attr, mask, fill)
	if err != nil {
		return nil, fmt.Errorf("SA %s: %w", what, err)
	}
	if st := resp.MAD.Status(); st != 0 {
		return nil, &saRecordError{what: what, st: st}
	}
	b := append([]byte(nil), resp.MAD.SAData()...)
	if w.t.opts.SARecordTTL > 0 {
		w.t.recs.Put(k, b)
	}
	return b, nil
}

// saCodec is a pointer to an SA record type: it writes a query's
// template and decodes the answer.
type saCodec[T any] interface {
	*T
	MarshalTo([]byte) error
	UnmarshalBinary([]byte) error
}

// saGet asks (saRecord) for the one record of attr that tmpl names under
// mask, cached as (attr, lid, n), and decodes it.
func saGet[T any, P saCodec[T]](w *walk, what string, attr ibmad.AttrID, lid uint16, n uint32, mask uint64, tmpl T) (T, error) {
	var r T
	b, err := w.saRecord(what, attr, lid, n, mask, func(b []byte) { _ = P(&tmpl).MarshalTo(b) })
	if err != nil {
		return r, err
	}
	if err := P(&r).UnmarshalBinary(b); err != nil {
		return r, &saRecordError{what: what, msg: err.Error()}
	}
	return r, nil
}

func (w *walk) saLinkFrom(lid uint16, port uint8) (saLink, error) {
	what := fmt.Sprintf("LinkRecord from LID %d port %d", lid, port)
	lr, err := saGet(w, what, ibmad.AttrLinkRecord, lid, uint32(port), ibmad.LRCompFromLID|ibmad.LRCompFromPort,
		ibmad.LinkRecord{FromLID: lid, FromPort: port})
	if isNoRecords(err) {
		// OpenSM masks the LIDs of a LinkRecord query with the subnet's
		// LMC: a switch LID that is not LMC-aligned never matches. Ask
		// for the links of every node's port instead (salinks.go).
		lr, err = w.saLinkByPort(what, lid, port, err)
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

func (w *walk) saNodeAt(lid uint16) (saNode, error) {
	what := fmt.Sprintf("NodeRecord of LID %d", lid)
	nr, err := saGet(w, what, ibmad.AttrNodeRecord, lid, 0, ibmad.NRCompLID, ibmad.NodeRecord{LID: lid})
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

func (w *walk) saPortInfo(lid uint16, port uint8) (saPort, error) {
	what := fmt.Sprintf("PortInfoRecord of LID %d port %d", lid, port)
	pir, err := saGet(w, what, ibmad.AttrPortInfoRecord, lid, uint32(port), ibmad.PIRCompLID|ibmad.PIRCompPortNum,
		ibmad.PortInfoRecord{LID: lid, PortNum: port})
	if err != nil {
		return saPort{}, err
	}
	if pir.PortNum != port {
		return saPort{}, &saRecordError{what: what, msg: fmt.Sprintf("answered port %d", pir.PortNum)}
	}
	pi := &pir.PortInfo
	return saPort{lid: pi.LID, lmc: pi.LMC, state: pi.PortState}, nil
}

func (w *walk) saLFTBlock(lid uint16, block uint32) (*ibmad.LFTBlock, error) {
	what := fmt.Sprintf("LinearForwardingTableRecord of LID %d block %d", lid, block)
	r, err := saGet(w, what, ibmad.AttrLFTRecord, lid, block, ibmad.LFTRCompLID|ibmad.LFTRCompBlock,
		ibmad.LFTRecord{LID: lid, Block: uint16(block)})
	if err != nil {
		return nil, err
	}
	if r.LID != lid || uint32(r.Block) != block {
		return nil, &saRecordError{what: what, msg: fmt.Sprintf("answered LID %d block %d", r.LID, r.Block)}
	}
	return &r.LFT, nil
}

// saFail classifies a failed SA record query of an SA-mode walk.
func (w *walk) saWalkFail(err error, format string, a ...any) *Error {
	what := fmt.Sprintf(format, a...)
	var re *saRecordError
	switch {
	case isSALimit(err):
		return fail(StatusUnreachable, ReasonSA, err, "%s: the SA cannot answer this (%v)", what, err)
	case errors.As(err, &re) && re.st.ClassSpecific() == ibmad.SAStatusNoRecords:
		return fail(StatusUnreachable, ReasonNoRoute, err, "%s: the SA has no such record (%v)", what, err)
	case errors.As(err, &re):
		return fail(StatusUnreachable, ReasonSA, err, "%s: %v", what, err)
	case errors.Is(err, ibmad.ErrTimeout):
		return fail(StatusUnreachable, ReasonSA, err, "%s: the SA at LID %d did not answer: %v", what, w.src.SMLID, err)
	}
	return w.smpFail(err, "%s", what)
}

// saCounter counts the SA record requests of a tracer, by record.
type saCounter struct {
	lft, link, node, port atomicCounter
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

// SARequests returns the SA record requests the tracer's SA-mode walks
// sent, by record name (docs/metrics.md: ibtracer_sa_record_requests_total).
func (t *Tracer) SARequests() map[string]uint64 {
	return map[string]uint64{
		"LinearForwardingTableRecord": uint64(t.saRequests.lft.Load()),
		"LinkRecord":                  uint64(t.saRequests.link.Load()),
		"NodeRecord":                  uint64(t.saRequests.node.Load()),
		"PortInfoRecord":              uint64(t.saRequests.port.Load()),
	}
}
