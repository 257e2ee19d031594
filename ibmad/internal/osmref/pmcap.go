//go:build cgo && ibcref

package osmref

/*
#cgo CFLAGS: -I/usr/include/infiniband
#include <stdint.h>
#include <iba/ib_types.h>

static uint16_t pmcap(int i) {
	static const ib_net16_t m[] = {
		IB_PM_ALL_PORT_SELECT, IB_PM_EXT_WIDTH_SUPPORTED, IB_PM_EXT_WIDTH_NOIETF_SUP, IB_PM_PC_XMIT_WAIT_SUP,
		IS_PM_RSFEC_COUNTERS_SUP,
	};
	return cl_ntoh16(m[i]);
}
static uint32_t pmcap2addl(void) { return cl_ntoh32(IB_PM_IS_ADDL_PORT_CTRS_EXT_SUP); }
*/
import "C"

// PerfMgt ClassPortInfo capability bits, named as in OpenSM's IB_PM_*.
var (
	PMAllPortSelect, PMExtWidthSupported  = uint16(C.pmcap(0)), uint16(C.pmcap(1))
	PMExtWidthNoIETF, PMXmitWaitSupported = uint16(C.pmcap(2)), uint16(C.pmcap(3))
	// PMRSFECCounters is IS_PM_RSFEC_COUNTERS_SUP: PortExtendedSpeedsCounters
	// has the RS-FEC layout when RS-FEC is active.
	PMRSFECCounters = uint16(C.pmcap(4))
	// PMAddlPortCtrsExt is CapabilityMask2's "additional PortCounters
	// extended" bit (IB_PM_IS_ADDL_PORT_CTRS_EXT_SUP).
	PMAddlPortCtrsExt = uint32(C.pmcap2addl())
)
