package sa

import (
	"context"
	"errors"
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// Sender sends the SA's MADs: an *ibmad.Engine, or a caller's own that
// sets every request's timeout and retries and counts what it sends (the
// tracer's walks count their MADs so).
type Sender interface {
	Do(ctx context.Context, req *ibmad.Request, resp *ibmad.Response) error
	GetTable(ctx context.Context, req *ibmad.Request, tr ibmad.TableRequest) (*ibmad.Table, error)
}

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
func GetTable(ctx context.Context, s Sender, sm ibmad.Address, attr ibmad.AttrID, mask uint64, template []byte) (*ibmad.Table, error) {
	q := ibmad.NewSAGet(attr, mask)
	q.Method = ibmad.MethodGetTable
	copy(q.Data[:], template)
	req := &ibmad.Request{Addr: sm}
	if err := q.MarshalTo(req.MAD[:]); err != nil {
		return nil, err
	}
	return s.GetTable(ctx, req, ibmad.TableRequest{})
}

// Get asks the SA at sm for the one record of attr that matches template
// under mask and returns its data (200 bytes, the record first). No
// match and several matches are *ibmad.StatusError (IsNoRecords, and
// SA status TooManyRecords).
func Get(ctx context.Context, s Sender, sm ibmad.Address, attr ibmad.AttrID, mask uint64, template []byte) ([]byte, error) {
	q := ibmad.NewSAGet(attr, mask)
	copy(q.Data[:], template)
	req := &ibmad.Request{Addr: sm}
	if err := q.MarshalTo(req.MAD[:]); err != nil {
		return nil, err
	}
	var resp ibmad.Response
	if err := s.Do(ctx, req, &resp); err != nil {
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

// record is a record type's codec both ways: a template out, a record in.
type record[T any] interface {
	codec[T]
	MarshalBinary() ([]byte, error)
}

// Table asks the SA at sm for every record of attr that matches tmpl
// under mask (0: every record) and returns them decoded. A table cut
// short (ibsim's: ErrTableTruncated) is returned with the records it
// holds.
func Table[T any, P record[T]](ctx context.Context, s Sender, sm ibmad.Address, attr ibmad.AttrID, mask uint64, tmpl T) ([]T, error) {
	b := wire[T, P](tmpl)
	t, err := GetTable(ctx, s, sm, attr, mask, b)
	if err != nil && !errors.Is(err, ibmad.ErrTableTruncated) {
		return nil, err
	}
	return decode[T, P](t, len(b), err)
}

// wire returns tmpl's wire form.
func wire[T any, P record[T]](tmpl T) []byte {
	b, _ := P(&tmpl).MarshalBinary()
	return b
}

// one asks the SA at sm for the one record of attr that matches tmpl
// under mask.
func one[T any, P record[T]](ctx context.Context, s Sender, sm ibmad.Address, attr ibmad.AttrID, mask uint64, tmpl T) (T, error) {
	var r T
	data, err := Get(ctx, s, sm, attr, mask, wire[T, P](tmpl))
	if err != nil {
		return r, err
	}
	return r, P(&r).UnmarshalBinary(data)
}

// NodeRecords returns every NodeRecord: one per switch and one per CA
// port with a LID.
func NodeRecords(ctx context.Context, s Sender, sm ibmad.Address) ([]ibmad.NodeRecord, error) {
	return Table(ctx, s, sm, ibmad.AttrNodeRecord, 0, ibmad.NodeRecord{})
}

// NodeRecordOf returns the NodeRecord of the port with LID lid (one
// record: a switch's, or a CA port's).
func NodeRecordOf(ctx context.Context, s Sender, sm ibmad.Address, lid uint16) (ibmad.NodeRecord, error) {
	return one(ctx, s, sm, ibmad.AttrNodeRecord, ibmad.NRCompLID, ibmad.NodeRecord{LID: lid})
}

// PortInfoRecord returns the PortInfoRecord of port port at LID lid.
func PortInfoRecord(ctx context.Context, s Sender, sm ibmad.Address, lid uint16, port uint8) (ibmad.PortInfoRecord, error) {
	return one(ctx, s, sm, ibmad.AttrPortInfoRecord, ibmad.PIRCompLID|ibmad.PIRCompPortNum, ibmad.PortInfoRecord{LID: lid, PortNum: port})
}

// LinkRecordFrom returns the link leaving port port of LID lid.
func LinkRecordFrom(ctx context.Context, s Sender, sm ibmad.Address, lid uint16, port uint8) (ibmad.LinkRecord, error) {
	return one(ctx, s, sm, ibmad.AttrLinkRecord, ibmad.LRCompFromLID|ibmad.LRCompFromPort, ibmad.LinkRecord{FromLID: lid, FromPort: port})
}

// LFTRecord returns block block of the linear forwarding table of the
// switch with LID switchLID.
func LFTRecord(ctx context.Context, s Sender, sm ibmad.Address, switchLID uint16, block uint16) (ibmad.LFTRecord, error) {
	return one(ctx, s, sm, ibmad.AttrLFTRecord, ibmad.LFTRCompLID|ibmad.LFTRCompBlock, ibmad.LFTRecord{LID: switchLID, Block: block})
}
