// Package sa reads the subnet administrator's tables: a GetTable of any
// record (reassembled from RMPP by ibmad.Engine.GetTable) and typed
// helpers for the records the tracer uses: NodeRecord, PortInfoRecord,
// LinkRecord, LinearForwardingTableRecord and SwitchInfoRecord
// (docs/protocol.md, "RMPP"; docs/architecture.md).
//
// On ibsim the SA's answers are cut to their first MAD (libumad2sim does
// not segment): a table helper then returns the records of that MAD and
// an error wrapping ibmad.ErrTableTruncated. The one-record helpers
// (NodeRecordOf, LFTRecord, PortInfoRecord, LinkRecordFrom) always fit
// one MAD.
package sa

import (
	"context"
	"errors"
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// Address returns the SA's address as a port knows it (SMLID, SMSL).
func Address(p ibmad.PortAttributes) ibmad.Address { return ibmad.GSIAddress(p.SMLID, p.SMSL) }

// IsNoRecords reports whether err is the SA's "no records" status.
func IsNoRecords(err error) bool {
	var se *ibmad.StatusError
	return errors.As(err, &se) && se.Status.ClassSpecific() == ibmad.SAStatusNoRecords
}

// GetTable asks the SA at sm for every record of attr that matches the
// components of template selected by mask, and returns them reassembled.
// template is the record's wire form (nil: all zero).
func GetTable(ctx context.Context, e *ibmad.Engine, sm ibmad.Address, attr ibmad.AttrID, mask uint64, template []byte) (*ibmad.Table, error) {
	q := ibmad.NewSAGet(attr, mask)
	q.Method = ibmad.MethodGetTable
	copy(q.Data[:], template)
	req := &ibmad.Request{Addr: sm}
	if err := q.MarshalTo(req.MAD[:]); err != nil {
		return nil, err
	}
	return e.GetTable(ctx, req, ibmad.TableRequest{})
}

// Get asks the SA at sm for the one record of attr that matches template
// under mask and returns its data (200 bytes, the record first). No
// match and several matches are *ibmad.StatusError (IsNoRecords, and
// SA status TooManyRecords).
func Get(ctx context.Context, e *ibmad.Engine, sm ibmad.Address, attr ibmad.AttrID, mask uint64, template []byte) ([]byte, error) {
	q := ibmad.NewSAGet(attr, mask)
	copy(q.Data[:], template)
	req := &ibmad.Request{Addr: sm}
	if err := q.MarshalTo(req.MAD[:]); err != nil {
		return nil, err
	}
	var resp ibmad.Response
	if err := e.Do(ctx, req, &resp); err != nil {
		return nil, err
	}
	if st := resp.MAD.Status(); st != 0 {
		return nil, fmt.Errorf("SA Get %s: %w", ibmad.AttrName(ibmad.ClassSubnAdm, attr), &ibmad.StatusError{Status: st})
	}
	return append([]byte(nil), resp.MAD.SAData()...), nil
}

// codec is a record type's decoder.
type codec[T any] interface {
	*T
	UnmarshalBinary([]byte) error
}

// decode unmarshals every record of t. A table error that leaves records
// (ErrTableTruncated) is returned with them.
func decode[T any, P codec[T]](t *ibmad.Table, size int, terr error) ([]T, error) {
	if t == nil {
		return nil, terr
	}
	if t.Len() > 0 && t.RecordSize < size {
		return nil, fmt.Errorf("SA %s table: records of %d bytes, want at least %d: %w",
			ibmad.AttrName(ibmad.ClassSubnAdm, t.AttrID), t.RecordSize, size, ibmad.ErrInvalid)
	}
	out := make([]T, t.Len())
	for i := range out {
		if err := P(&out[i]).UnmarshalBinary(t.Record(i)); err != nil {
			return nil, fmt.Errorf("SA %s record %d: %w", ibmad.AttrName(ibmad.ClassSubnAdm, t.AttrID), i, err)
		}
	}
	return out, terr
}

func table[T any, P codec[T]](ctx context.Context, e *ibmad.Engine, sm ibmad.Address, attr ibmad.AttrID, size int, mask uint64, tmpl []byte) ([]T, error) {
	t, err := GetTable(ctx, e, sm, attr, mask, tmpl)
	if err != nil && !errors.Is(err, ibmad.ErrTableTruncated) {
		return nil, err
	}
	return decode[T, P](t, size, err)
}

// NodeRecords returns every NodeRecord: one per switch and one per CA
// port with a LID.
func NodeRecords(ctx context.Context, e *ibmad.Engine, sm ibmad.Address) ([]ibmad.NodeRecord, error) {
	return table[ibmad.NodeRecord](ctx, e, sm, ibmad.AttrNodeRecord, ibmad.NodeRecordSize, 0, nil)
}

// NodeRecordOf returns the NodeRecord of the port with LID lid (one
// record: a switch's, or a CA port's).
func NodeRecordOf(ctx context.Context, e *ibmad.Engine, sm ibmad.Address, lid uint16) (ibmad.NodeRecord, error) {
	var r ibmad.NodeRecord
	tmpl := ibmad.NodeRecord{LID: lid}
	b, _ := tmpl.MarshalBinary()
	data, err := Get(ctx, e, sm, ibmad.AttrNodeRecord, ibmad.NRCompLID, b)
	if err != nil {
		return r, err
	}
	return r, r.UnmarshalBinary(data)
}

// PortInfoRecords returns the PortInfoRecords of the port with LID lid
// (a switch: all its ports), or of every port when lid is 0.
func PortInfoRecords(ctx context.Context, e *ibmad.Engine, sm ibmad.Address, lid uint16) ([]ibmad.PortInfoRecord, error) {
	var mask uint64
	r := ibmad.PortInfoRecord{LID: lid}
	if lid != 0 {
		mask = ibmad.PIRCompLID
	}
	b := make([]byte, ibmad.PortInfoRecordSize)
	_ = r.MarshalTo(b)
	return table[ibmad.PortInfoRecord](ctx, e, sm, ibmad.AttrPortInfoRecord, ibmad.PortInfoRecordSize, mask, b)
}

// PortInfoRecord returns the PortInfoRecord of port port at LID lid.
func PortInfoRecord(ctx context.Context, e *ibmad.Engine, sm ibmad.Address, lid uint16, port uint8) (ibmad.PortInfoRecord, error) {
	var r ibmad.PortInfoRecord
	tmpl := ibmad.PortInfoRecord{LID: lid, PortNum: port}
	b := make([]byte, ibmad.PortInfoRecordSize)
	_ = tmpl.MarshalTo(b)
	data, err := Get(ctx, e, sm, ibmad.AttrPortInfoRecord, ibmad.PIRCompLID|ibmad.PIRCompPortNum, b)
	if err != nil {
		return r, err
	}
	return r, r.UnmarshalBinary(data)
}

// LinkRecords returns every LinkRecord (both directions of each link), or
// those leaving LID fromLID when it is not 0.
func LinkRecords(ctx context.Context, e *ibmad.Engine, sm ibmad.Address, fromLID uint16) ([]ibmad.LinkRecord, error) {
	var mask uint64
	if fromLID != 0 {
		mask = ibmad.LRCompFromLID
	}
	r := ibmad.LinkRecord{FromLID: fromLID}
	b, _ := r.MarshalBinary()
	return table[ibmad.LinkRecord](ctx, e, sm, ibmad.AttrLinkRecord, ibmad.LinkRecordSize, mask, b)
}

// LinkRecordFrom returns the link leaving port port of LID lid.
func LinkRecordFrom(ctx context.Context, e *ibmad.Engine, sm ibmad.Address, lid uint16, port uint8) (ibmad.LinkRecord, error) {
	var r ibmad.LinkRecord
	tmpl := ibmad.LinkRecord{FromLID: lid, FromPort: port}
	b, _ := tmpl.MarshalBinary()
	data, err := Get(ctx, e, sm, ibmad.AttrLinkRecord, ibmad.LRCompFromLID|ibmad.LRCompFromPort, b)
	if err != nil {
		return r, err
	}
	return r, r.UnmarshalBinary(data)
}

// LFTRecord returns block block of the linear forwarding table of the
// switch with LID switchLID.
func LFTRecord(ctx context.Context, e *ibmad.Engine, sm ibmad.Address, switchLID uint16, block uint16) (ibmad.LFTRecord, error) {
	var r ibmad.LFTRecord
	tmpl := ibmad.LFTRecord{LID: switchLID, Block: block}
	b, _ := tmpl.MarshalBinary()
	data, err := Get(ctx, e, sm, ibmad.AttrLFTRecord, ibmad.LFTRCompLID|ibmad.LFTRCompBlock, b)
	if err != nil {
		return r, err
	}
	return r, r.UnmarshalBinary(data)
}

// LFTRecords returns every block of the switch with LID switchLID, or of
// every switch when switchLID is 0.
func LFTRecords(ctx context.Context, e *ibmad.Engine, sm ibmad.Address, switchLID uint16) ([]ibmad.LFTRecord, error) {
	var mask uint64
	if switchLID != 0 {
		mask = ibmad.LFTRCompLID
	}
	r := ibmad.LFTRecord{LID: switchLID}
	b, _ := r.MarshalBinary()
	return table[ibmad.LFTRecord](ctx, e, sm, ibmad.AttrLFTRecord, ibmad.LFTRecordSize, mask, b)
}

// SwitchInfoRecords returns the SwitchInfoRecord of every switch.
func SwitchInfoRecords(ctx context.Context, e *ibmad.Engine, sm ibmad.Address) ([]ibmad.SwitchInfoRecord, error) {
	return table[ibmad.SwitchInfoRecord](ctx, e, sm, ibmad.AttrSwitchInfoRecord, ibmad.SwitchInfoRecordSize, 0, nil)
}
