//go:build cgo && ibcref

package osmref

/*
#include <stdint.h>
#include <infiniband/mad.h>
#include <infiniband/umad_sa.h>
*/
import "C"

// SA attribute IDs: libibmad's IB_SA_ATTR_* and libibumad's UMAD_SA_ATTR_*.
var (
	MadAttrClassPortInfo, MadAttrNodeRecord, MadAttrPathRecord    = uint16(C.CLASS_PORT_INFO), uint16(C.IB_SA_ATTR_NODERECORD), uint16(C.IB_SA_ATTR_PATHRECORD)
	UmadAttrClassPortInfo, UmadAttrNodeRecord, UmadAttrPathRecord = uint16(C.UMAD_ATTR_CLASS_PORT_INFO), uint16(C.UMAD_SA_ATTR_NODE_REC), uint16(C.UMAD_SA_ATTR_PATH_REC)
)

// MadClassSubnAdm is libibmad's SA class; UmadSAClassVersion libibumad's
// SA class version.
var MadClassSubnAdm, UmadSAClassVersion = uint8(C.IB_SA_CLASS), uint8(C.UMAD_SA_CLASS_VERSION)
