//go:build cgo && ibcref

package osmref

/*
#cgo CFLAGS: -I/usr/include/infiniband
#include <stdint.h>
#include <string.h>
#include <iba/ib_types.h>

// path_fields reads a PathRecord's addressing fields with OpenSM's own
// getters: DLID, SL, hop limit, traffic class, flow label (host order) and
// the DGID's 16 bytes.
static void path_fields(const uint8_t *rec, uint16_t *dlid, uint8_t *sl, uint8_t *hop, uint8_t *tclass,
                        uint32_t *flow, uint8_t *dgid) {
	ib_path_rec_t p;
	memcpy(&p, rec, sizeof(p));
	*dlid = cl_ntoh16(p.dlid);
	*sl = ib_path_rec_sl(&p);
	*hop = ib_path_rec_hop_limit(&p);
	*tclass = p.tclass;
	*flow = ib_path_rec_flow_lbl(&p);
	memcpy(dgid, p.dgid.raw, 16);
}
static long path_rec_size(void) { return sizeof(ib_path_rec_t); }
*/
import "C"

import "unsafe"

// PathFields is what OpenSM's getters read from a 64-byte PathRecord.
type PathFields struct {
	DLID      uint16
	SL        uint8
	HopLimit  uint8
	TClass    uint8
	FlowLabel uint32
	DGID      [16]byte
}

// PathRecordSize is sizeof(ib_path_rec_t).
func PathRecordSize() int { return int(C.path_rec_size()) }

// ReadPathRecord reads rec (64 bytes) with OpenSM's getters.
func ReadPathRecord(rec []byte) PathFields {
	var f PathFields
	var dlid C.uint16_t
	var sl, hop, tclass C.uint8_t
	var flow C.uint32_t
	buf := make([]byte, 64)
	copy(buf, rec)
	C.path_fields((*C.uint8_t)(unsafe.Pointer(&buf[0])), &dlid, &sl, &hop, &tclass, &flow, (*C.uint8_t)(unsafe.Pointer(&f.DGID[0])))
	f.DLID, f.SL, f.HopLimit, f.TClass, f.FlowLabel = uint16(dlid), uint8(sl), uint8(hop), uint8(tclass), uint32(flow)
	return f
}
