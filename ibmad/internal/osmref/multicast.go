//go:build cgo && ibcref

package osmref

/*
#cgo CFLAGS: -I/usr/include/infiniband
#include <stdint.h>
#include <string.h>
#include <infiniband/mad.h>
#include <iba/ib_types.h>

static uint64_t mcr(int i) {
	static const ib_net64_t m[] = {
		IB_MCR_COMPMASK_MGID, IB_MCR_COMPMASK_PORT_GID, IB_MCR_COMPMASK_QKEY, IB_MCR_COMPMASK_MLID,
		IB_MCR_COMPMASK_TCLASS, IB_MCR_COMPMASK_PKEY, IB_MCR_COMPMASK_SL, IB_MCR_COMPMASK_FLOW,
		IB_MCR_COMPMASK_JOIN_STATE,
	};
	return cl_ntoh64(m[i]);
}

// mcrec writes an MCMemberRecord as OpenSM builds one, with its setters.
static void mcrec(uint8_t *out, const uint8_t *mgid, const uint8_t *pgid, uint32_t qkey, uint16_t mlid,
		uint8_t tclass, uint16_t pkey, uint8_t sl, uint32_t flow, uint8_t scope, uint8_t state) {
	ib_member_rec_t r;
	memset(&r, 0, sizeof r);
	memcpy(&r.mgid, mgid, 16);
	memcpy(&r.port_gid, pgid, 16);
	r.qkey = cl_hton32(qkey);
	r.mlid = cl_hton16(mlid);
	r.tclass = tclass;
	r.pkey = cl_hton16(pkey);
	r.sl_flow_hop = ib_member_set_sl_flow_hop(sl, flow, 0);
	r.scope_state = ib_member_set_scope_state(scope, state);
	memcpy(out, &r, 52);
}
static uint16_t mc16(ib_net16_t v) { return cl_ntoh16(v); }
*/
import "C"

import "unsafe"

// MCMemberRecord component mask bits, named as in OpenSM's IB_MCR_COMPMASK_*.
var (
	MCRMGID, MCRPortGID, MCRQKey, MCRMLID = uint64(C.mcr(0)), uint64(C.mcr(1)), uint64(C.mcr(2)), uint64(C.mcr(3))
	MCRTClass, MCRPKey, MCRSL, MCRFlow    = uint64(C.mcr(4)), uint64(C.mcr(5)), uint64(C.mcr(6)), uint64(C.mcr(7))
	MCRJoinState                          = uint64(C.mcr(8))
)

// Multicast attribute IDs and the MLID range: OpenSM's IB_MAD_ATTR_* and
// libibmad's IB_ATTR_MULTICASTFORWTBL, IB_MIN_MCAST_LID, IB_MAX_MCAST_LID.
var (
	OSMAttrMCMemberRecord, OSMAttrMcastFwdTbl = uint16(C.mc16(C.IB_MAD_ATTR_MCMEMBER_RECORD)), uint16(C.mc16(C.IB_MAD_ATTR_MCAST_FWD_TBL))
	MadAttrMulticastForwTbl                   = uint16(C.IB_ATTR_MULTICASTFORWTBL)
	MadMinMcastLID, MadMaxMcastLID            = uint16(C.IB_MIN_MCAST_LID), uint16(C.IB_MAX_MCAST_LID)
)

// MCMemberRecordBytes returns the first 52 bytes of an MCMemberRecord
// built with OpenSM's setters (ib_member_set_sl_flow_hop,
// ib_member_set_scope_state).
func MCMemberRecordBytes(mgid, portGID [16]byte, qkey uint32, mlid uint16, tclass uint8, pkey uint16, sl uint8,
	flow uint32, scope, state uint8) []byte {
	out := make([]byte, 52)
	C.mcrec((*C.uint8_t)(unsafe.Pointer(&out[0])), (*C.uint8_t)(unsafe.Pointer(&mgid[0])), (*C.uint8_t)(unsafe.Pointer(&portGID[0])),
		C.uint32_t(qkey), C.uint16_t(mlid), C.uint8_t(tclass), C.uint16_t(pkey), C.uint8_t(sl), C.uint32_t(flow), C.uint8_t(scope), C.uint8_t(state))
	return out
}
