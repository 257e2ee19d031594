//go:build cgo && ibcref

package cmadref

/*
#include <infiniband/mad.h>
*/
import "C"

// GSI_PORT_VL_XMIT_WAIT_COUNTERS is libibmad's attribute ID of
// PortVLXmitWaitCounters.
const GSI_PORT_VL_XMIT_WAIT_COUNTERS = C.IB_GSI_PORT_PORT_VL_XMIT_WAIT_COUNTERS

// PC_VL_XMIT_WAIT are libibmad's PortVLXmitWaitCounters fields,
// PortVLXmitWait0 to PortVLXmitWait15, and PC_VL_XMIT_WAIT_PORT_SELECT
// and _COUNTER_SELECT the fields libibmad says the attribute shares with
// PortCounters.
var (
	PC_VL_XMIT_WAIT                                             [16]int
	PC_VL_XMIT_WAIT_PORT_SELECT, PC_VL_XMIT_WAIT_COUNTER_SELECT = int(C.IB_PC_PORT_SELECT_F), int(C.IB_PC_COUNTER_SELECT_F)
)

func init() {
	for i := range PC_VL_XMIT_WAIT {
		PC_VL_XMIT_WAIT[i] = int(C.IB_PC_PORT_VL_XMIT_WAIT0_F) + i
	}
}
