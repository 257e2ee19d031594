//go:build cgo && ibcref

package osmref

/*
#include <stdint.h>
#include <infiniband/mad.h>
#include <infiniband/umad_types.h>
*/
import "C"

// libibmad's SA record attribute IDs (IB_SA_ATTR_*), its SA data offset
// (IB_SA_DATA_OFFS) and libibumad's RMPP payload per segment
// (UMAD_LEN_RMPP_DATA).
var (
	MadAttrPortInfoRecord, MadAttrSwitchInfoRecord = uint16(C.IB_SA_ATTR_PORTINFORECORD), uint16(C.IB_SA_ATTR_SWITCHINFORECORD)
	MadAttrLFTRecord, MadAttrLinkRecord            = uint16(C.IB_SA_ATTR_LFTRECORD), uint16(C.IB_SA_ATTR_LINKRECORD)
	MadSADataOffs, UmadRMPPData                    = int(C.IB_SA_DATA_OFFS), int(C.UMAD_LEN_RMPP_DATA)
)
