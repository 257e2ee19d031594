//go:build cgo && ibcref

package osmref

/*
#cgo CFLAGS: -I/usr/include/infiniband
#include <stddef.h>
#include <stdint.h>
#include <iba/ib_types.h>

enum {
	offsetof_lft_block = offsetof(ib_lft_record_t, block_num),
	offsetof_lft_lft = offsetof(ib_lft_record_t, lft),
	offsetof_lr_from_port = offsetof(ib_link_record_t, from_port_num),
	offsetof_lr_to_port = offsetof(ib_link_record_t, to_port_num),
	offsetof_lr_to_lid = offsetof(ib_link_record_t, to_lid),
	offsetof_pir_port_num = offsetof(ib_portinfo_record_t, port_num),
	offsetof_pir_options = offsetof(ib_portinfo_record_t, options),
	offsetof_pir_port_info = offsetof(ib_portinfo_record_t, port_info),
	offsetof_swir_si = offsetof(ib_switch_info_record_t, switch_info),
	offsetof_nr_ni = offsetof(ib_node_record_t, node_info),
	offsetof_nr_nd = offsetof(ib_node_record_t, node_desc),
};
static uint64_t m64(ib_net64_t v) { return cl_ntoh64(v); }
static uint16_t n16(ib_net16_t v) { return cl_ntoh16(v); }
*/
import "C"

// Record layouts from OpenSM's ib_types.h: sizeof and field offsets.
var (
	SizeNodeRecord, SizeLFTRecord, SizeLinkRecord   = int(C.sizeof_ib_node_record_t), int(C.sizeof_ib_lft_record_t), int(C.sizeof_ib_link_record_t)
	SizePortInfoRecord, SizeSwitchInfoRecord        = int(C.sizeof_ib_portinfo_record_t), int(C.sizeof_ib_switch_info_record_t)
	OffLFTRBlock, OffLFTRLFT                        = int(C.offsetof_lft_block), int(C.offsetof_lft_lft)
	OffLRFromPort, OffLRToPort, OffLRToLID          = int(C.offsetof_lr_from_port), int(C.offsetof_lr_to_port), int(C.offsetof_lr_to_lid)
	OffPIRPortNum, OffPIROptions, OffPIRPortInfo    = int(C.offsetof_pir_port_num), int(C.offsetof_pir_options), int(C.offsetof_pir_port_info)
	OffSWIRSwitchInfo, OffNRNodeInfo, OffNRNodeDesc = int(C.offsetof_swir_si), int(C.offsetof_nr_ni), int(C.offsetof_nr_nd)
	SizePortInfo, SizeSwitchInfo                    = int(C.sizeof_ib_port_info_t), int(C.sizeof_ib_switch_info_t)
)

// Component mask bits of the records, OpenSM's IB_*_COMPMASK_*.
var (
	LFTRLID, LFTRBlock              = uint64(C.m64(C.IB_LFTR_COMPMASK_LID)), uint64(C.m64(C.IB_LFTR_COMPMASK_BLOCK))
	LRFromLID, LRFromPort, LRToPort = uint64(C.m64(C.IB_LR_COMPMASK_FROM_LID)), uint64(C.m64(C.IB_LR_COMPMASK_FROM_PORT)), uint64(C.m64(C.IB_LR_COMPMASK_TO_PORT))
	LRToLID                         = uint64(C.m64(C.IB_LR_COMPMASK_TO_LID))
	PIRLID, PIRPortNum, PIROptions  = uint64(C.m64(C.IB_PIR_COMPMASK_LID)), uint64(C.m64(C.IB_PIR_COMPMASK_PORTNUM)), uint64(C.m64(C.IB_PIR_COMPMASK_OPTIONS))
	SWIRLID                         = uint64(C.m64(C.IB_SWIR_COMPMASK_LID))
)

// Attribute IDs: OpenSM's IB_MAD_ATTR_*.
var (
	OSMAttrPortInfoRecord, OSMAttrSwitchInfoRecord = uint16(C.n16(C.IB_MAD_ATTR_PORTINFO_RECORD)), uint16(C.n16(C.IB_MAD_ATTR_SWITCH_INFO_RECORD))
	OSMAttrLFTRecord, OSMAttrLinkRecord            = uint16(C.n16(C.IB_MAD_ATTR_LFT_RECORD)), uint16(C.n16(C.IB_MAD_ATTR_LINK_RECORD))
)

// RMPP constants: OpenSM's IB_RMPP_*, MAD_RMPP_HDR_SIZE and GetTable
// methods.
var (
	RMPPTypeData, RMPPTypeAck, RMPPTypeStop, RMPPTypeAbort = int(C.IB_RMPP_TYPE_DATA), int(C.IB_RMPP_TYPE_ACK), int(C.IB_RMPP_TYPE_STOP), int(C.IB_RMPP_TYPE_ABORT)
	RMPPFlagActive, RMPPFlagFirst, RMPPFlagLast            = int(C.IB_RMPP_FLAG_ACTIVE), int(C.IB_RMPP_FLAG_FIRST), int(C.IB_RMPP_FLAG_LAST)
	OSMRMPPHdrSize                                         = int(C.MAD_RMPP_HDR_SIZE)
	OSMMethodGetTable, OSMMethodGetTableResp               = int(C.IB_MAD_METHOD_GETTABLE), int(C.IB_MAD_METHOD_GETTABLE_RESP)
)
