package ibsimtest

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/sa"
)

// Joining a multicast group, so that the SM programs the MFTs a multicast
// trace follows: the tests' own, as the exporter and ibtracer join none.

// AttrMCMemberRecord is the SA MCMemberRecord attribute (docs/protocol.md,
// "Joining a multicast group").
const AttrMCMemberRecord ibmad.AttrID = 0x0038

// MCMemberRecordSize is the size of an MCMemberRecord.
const MCMemberRecordSize = 52

// MCMemberRecord ComponentMask bits: bit n is the n-th field of the record.
const (
	MCCompMGID      uint64 = 1 << 0
	MCCompPortGID   uint64 = 1 << 1
	MCCompQKey      uint64 = 1 << 2
	MCCompMLID      uint64 = 1 << 3
	MCCompTClass    uint64 = 1 << 6
	MCCompPKey      uint64 = 1 << 7
	MCCompSL        uint64 = 1 << 12
	MCCompFlowLabel uint64 = 1 << 13
	MCCompJoinState uint64 = 1 << 16
)

// JoinFullMember is the JoinState of a full member.
const JoinFullMember = 1

// MCMemberRecord is the part of the SA MCMemberRecord a join needs.
type MCMemberRecord struct {
	MGID      ibmad.GID
	PortGID   ibmad.GID
	QKey      uint32
	MLID      uint16
	TClass    uint8
	PKey      uint16
	SL        uint8
	FlowLabel uint32
	Scope     uint8
	JoinState uint8
}

// MarshalTo writes the record into b[0:52].
func (r *MCMemberRecord) MarshalTo(b []byte) error {
	if len(b) < MCMemberRecordSize {
		return fmt.Errorf("MCMemberRecord: need %d bytes, have %d: %w", MCMemberRecordSize, len(b), ibmad.ErrInvalid)
	}
	clear(b[:MCMemberRecordSize])
	copy(b[0:], r.MGID[:])
	copy(b[16:], r.PortGID[:])
	binary.BigEndian.PutUint32(b[32:], r.QKey)
	binary.BigEndian.PutUint16(b[36:], r.MLID)
	b[39] = r.TClass
	binary.BigEndian.PutUint16(b[40:], r.PKey)
	binary.BigEndian.PutUint32(b[44:], uint32(r.SL&0xf)<<28|(r.FlowLabel&0xfffff)<<8)
	b[48] = r.Scope<<4 | r.JoinState&0xf
	return nil
}

// UnmarshalBinary decodes b[0:52].
func (r *MCMemberRecord) UnmarshalBinary(b []byte) error {
	if len(b) < MCMemberRecordSize {
		return fmt.Errorf("MCMemberRecord: need %d bytes, have %d: %w", MCMemberRecordSize, len(b), ibmad.ErrInvalid)
	}
	copy(r.MGID[:], b[0:16])
	copy(r.PortGID[:], b[16:32])
	r.QKey = binary.BigEndian.Uint32(b[32:])
	r.MLID = binary.BigEndian.Uint16(b[36:])
	r.TClass = b[39]
	r.PKey = binary.BigEndian.Uint16(b[40:])
	v := binary.BigEndian.Uint32(b[44:])
	r.SL, r.FlowLabel = uint8(v>>28), v>>8&0xfffff
	r.Scope, r.JoinState = b[48]>>4, b[48]&0xf
	return nil
}

// Join asks the SA at sm to make port (a GID of the port the engine
// sends from) a full member of the group mgid, creating the group when it
// does not exist (an SA MCMemberRecord Set), and returns the record the
// SA answered with, whose MLID is the group's.
func Join(ctx context.Context, s sa.Sender, sm ibmad.Address, mgid, port ibmad.GID) (MCMemberRecord, error) {
	rec := MCMemberRecord{MGID: mgid, PortGID: port, QKey: 0x0B1B, PKey: 0xFFFF, Scope: 2, JoinState: JoinFullMember}
	mask := MCCompMGID | MCCompPortGID | MCCompQKey | MCCompTClass | MCCompPKey | MCCompSL | MCCompFlowLabel | MCCompJoinState
	q := ibmad.NewSAGet(AttrMCMemberRecord, mask)
	q.Method = ibmad.MethodSet
	if err := rec.MarshalTo(q.Data[:]); err != nil {
		return rec, err
	}
	req := &ibmad.Request{Addr: sm}
	if err := q.MarshalTo(req.MAD[:]); err != nil {
		return rec, err
	}
	var resp ibmad.Response
	if err := s.Do(ctx, req, &resp); err != nil {
		return rec, fmt.Errorf("SA Set MCMemberRecord %s for %s: %w", mgid, port, err)
	}
	if st := resp.MAD.Status(); st != 0 {
		return rec, fmt.Errorf("SA Set MCMemberRecord %s for %s: %w", mgid, port, &ibmad.StatusError{Status: st})
	}
	var got MCMemberRecord
	err := got.UnmarshalBinary(resp.MAD.SAData())
	return got, err
}
