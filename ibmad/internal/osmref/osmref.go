//go:build cgo && ibcref

package osmref

/*
#cgo CFLAGS: -I/usr/include/infiniband
#include <stdint.h>
#include <iba/ib_types.h>

// OpenSM keeps its constants in network byte order.
static uint64_t nr(int i) {
	static const ib_net64_t m[] = {
		IB_NR_COMPMASK_LID, IB_NR_COMPMASK_RESERVED1, IB_NR_COMPMASK_BASEVERSION,
		IB_NR_COMPMASK_CLASSVERSION, IB_NR_COMPMASK_NODETYPE, IB_NR_COMPMASK_NUMPORTS,
		IB_NR_COMPMASK_SYSIMAGEGUID, IB_NR_COMPMASK_NODEGUID, IB_NR_COMPMASK_PORTGUID,
		IB_NR_COMPMASK_PARTCAP, IB_NR_COMPMASK_DEVID, IB_NR_COMPMASK_REV,
		IB_NR_COMPMASK_PORTNUM, IB_NR_COMPMASK_VENDID, IB_NR_COMPMASK_NODEDESC,
	};
	return cl_ntoh64(m[i]);
}
static uint64_t pr(int i) {
	static const ib_net64_t m[] = {
		IB_PR_COMPMASK_SERVICEID_MSB, IB_PR_COMPMASK_SERVICEID_LSB, IB_PR_COMPMASK_DGID,
		IB_PR_COMPMASK_SGID, IB_PR_COMPMASK_DLID, IB_PR_COMPMASK_SLID,
		IB_PR_COMPMASK_RAWTRAFFIC, IB_PR_COMPMASK_RESV0, IB_PR_COMPMASK_FLOWLABEL,
		IB_PR_COMPMASK_HOPLIMIT, IB_PR_COMPMASK_TCLASS, IB_PR_COMPMASK_REVERSIBLE,
		IB_PR_COMPMASK_NUMBPATH, IB_PR_COMPMASK_PKEY, IB_PR_COMPMASK_QOS_CLASS,
		IB_PR_COMPMASK_SL, IB_PR_COMPMASK_MTUSELEC, IB_PR_COMPMASK_MTU,
		IB_PR_COMPMASK_RATESELEC, IB_PR_COMPMASK_RATE, IB_PR_COMPMASK_PKTLIFETIMESELEC,
		IB_PR_COMPMASK_PKTLIFETIME,
	};
	return cl_ntoh64(m[i]);
}
static uint16_t h16(ib_net16_t v) { return cl_ntoh16(v); }
*/
import "C"

// Available reports whether the headers are compiled in.
const Available = true

// NodeRecord component mask bits, named as in OpenSM's IB_NR_COMPMASK_*.
var (
	NRLID, NRReserved1, NRBaseVersion, NRClassVersion, NRNodeType = uint64(C.nr(0)), uint64(C.nr(1)), uint64(C.nr(2)), uint64(C.nr(3)), uint64(C.nr(4))
	NRNumPorts, NRSysImageGUID, NRNodeGUID, NRPortGUID, NRPartCap = uint64(C.nr(5)), uint64(C.nr(6)), uint64(C.nr(7)), uint64(C.nr(8)), uint64(C.nr(9))
	NRDevID, NRRev, NRPortNum, NRVendID, NRNodeDesc               = uint64(C.nr(10)), uint64(C.nr(11)), uint64(C.nr(12)), uint64(C.nr(13)), uint64(C.nr(14))
)

// PathRecord component mask bits, named as in OpenSM's IB_PR_COMPMASK_*.
var (
	PRServiceIDMSB, PRServiceIDLSB, PRDGID, PRSGID, PRDLID, PRSLID = uint64(C.pr(0)), uint64(C.pr(1)), uint64(C.pr(2)), uint64(C.pr(3)), uint64(C.pr(4)), uint64(C.pr(5))
	PRRawTraffic, PRResv0, PRFlowLabel, PRHopLimit, PRTClass       = uint64(C.pr(6)), uint64(C.pr(7)), uint64(C.pr(8)), uint64(C.pr(9)), uint64(C.pr(10))
	PRReversible, PRNumbPath, PRPKey, PRQoSClass, PRSL             = uint64(C.pr(11)), uint64(C.pr(12)), uint64(C.pr(13)), uint64(C.pr(14)), uint64(C.pr(15))
	PRMTUSelec, PRMTU, PRRateSelec, PRRate                         = uint64(C.pr(16)), uint64(C.pr(17)), uint64(C.pr(18)), uint64(C.pr(19))
	PRPktLifeTimeSelec, PRPktLifeTime                              = uint64(C.pr(20)), uint64(C.pr(21))
)

// SA attribute IDs: OpenSM's IB_MAD_ATTR_*.
var OSMAttrClassPortInfo, OSMAttrNodeRecord, OSMAttrPathRecord = uint16(C.h16(C.IB_MAD_ATTR_CLASS_PORT_INFO)), uint16(C.h16(C.IB_MAD_ATTR_NODE_RECORD)), uint16(C.h16(C.IB_MAD_ATTR_PATH_RECORD))

// OSMClassSubnAdm is OpenSM's SA management class.
var OSMClassSubnAdm = uint8(C.IB_MCLASS_SUBN_ADM)

// SA MAD status words (the 16-bit status field), OpenSM's
// IB_SA_MAD_STATUS_* and IB_MAD_STATUS_*.
var (
	StatusNoResources, StatusReqInvalid, StatusNoRecords      = uint16(C.h16(C.IB_SA_MAD_STATUS_NO_RESOURCES)), uint16(C.h16(C.IB_SA_MAD_STATUS_REQ_INVALID)), uint16(C.h16(C.IB_SA_MAD_STATUS_NO_RECORDS))
	StatusTooManyRecords, StatusInvalidGID, StatusInsufComps  = uint16(C.h16(C.IB_SA_MAD_STATUS_TOO_MANY_RECORDS)), uint16(C.h16(C.IB_SA_MAD_STATUS_INVALID_GID)), uint16(C.h16(C.IB_SA_MAD_STATUS_INSUF_COMPS))
	StatusReqDenied, StatusUnsupMethod, StatusUnsupMethodAttr = uint16(C.h16(C.IB_SA_MAD_STATUS_DENIED)), uint16(C.h16(C.IB_MAD_STATUS_UNSUP_METHOD)), uint16(C.h16(C.IB_MAD_STATUS_UNSUP_METHOD_ATTR))
)
