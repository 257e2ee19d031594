//go:build cgo && ibcref

package cmadref

/*
#include <infiniband/mad.h>
*/
import "C"

// libibmad's attribute IDs of PortRcvErrorDetails, PortXmitDiscardDetails
// and PortExtendedSpeedsCounters.
const (
	GSI_PORT_RCV_ERROR_DETAILS    = C.IB_GSI_PORT_RCV_ERROR_DETAILS
	GSI_PORT_XMIT_DISCARD_DETAILS = C.IB_GSI_PORT_XMIT_DISCARD_DETAILS
	GSI_PORT_EXT_SPEEDS_COUNTERS  = C.IB_GSI_PORT_EXT_SPEEDS_COUNTERS
)

// libibmad's PortRcvErrorDetails and PortXmitDiscardDetails fields (both
// share PortSelect and CounterSelect with PortCounters: PC_PORT_SELECT,
// PC_COUNTER_SELECT), in field order.
var (
	PC_RCV_ERR = []int{int(C.IB_PC_RCV_LOCAL_PHY_ERR_F), int(C.IB_PC_RCV_MALFORMED_PKT_ERR_F), int(C.IB_PC_RCV_BUF_OVR_ERR_F),
		int(C.IB_PC_RCV_DLID_MAP_ERR_F), int(C.IB_PC_RCV_VL_MAP_ERR_F), int(C.IB_PC_RCV_LOOPING_ERR_F)}
	PC_XMT_DISC = []int{int(C.IB_PC_XMT_INACT_DISC_F), int(C.IB_PC_XMT_NEIGH_MTU_DISC_F), int(C.IB_PC_XMT_SW_LIFE_DISC_F),
		int(C.IB_PC_XMT_SW_HOL_DISC_F)}
)

// The first and past-the-last fields of libibmad's
// PortExtendedSpeedsCounters, and of its RS-FEC-active variant: every
// field in between is compared.
var (
	PESC_FIRST, PESC_LAST             = int(C.IB_PESC_PORT_SELECT_F), int(C.IB_PESC_LAST_F)
	PESC_RSFEC_FIRST, PESC_RSFEC_LAST = int(C.IB_PESC_RSFEC_FIRST_F), int(C.IB_PESC_RSFEC_LAST_F)
	PESC_COUNTER_SELECT               = int(C.IB_PESC_COUNTER_SELECT_F)
	PESC_RSFEC_COUNTER_SELECT         = int(C.IB_PESC_RSFEC_COUNTER_SELECT_F)
)

// LastRcvErr and LastXmtDisc are libibmad's end markers of the two detail
// field lists: the lists above must reach them.
var LastRcvErr, LastXmtDisc = int(C.IB_PC_RCV_ERR_LAST_F), int(C.IB_PC_XMT_DISC_LAST_F)
