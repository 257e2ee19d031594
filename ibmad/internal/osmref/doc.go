// Package osmref exposes OpenSM's and libibmad's SA constants (component
// mask bits, attribute IDs, status codes) for the tests that check ibmad's
// copies against a source that is not ours. It uses cgo and needs Debian's
// libopensm-dev (iba/ib_types.h) and libibmad-dev (infiniband/mad.h); only
// tests import it, so the product binaries stay free of cgo. It builds
// only with the ibcref build tag (make test sets it): go build ./... and
// go vet ./... need no C header.
//
// What each file holds (cgo, ibcref tag):
//   - osmref.go: Available; OpenSM's NodeRecord and PathRecord component
//     mask bits, SA attribute IDs, SA class and SA MAD status words.
//   - records.go: OpenSM's layouts (sizes, field offsets), component mask
//     bits and attribute IDs of the table records (LFTRecord, LinkRecord,
//     PortInfoRecord, SwitchInfoRecord), and its RMPP constants.
//   - madref.go: libibmad's and libibumad's SA attribute IDs, SA class and
//     SA class version.
//   - madrecords.go: libibmad's table-record attribute IDs and SA data
//     offset, and libibumad's RMPP payload per segment.
//   - pathrec.go: a PathRecord's DLID, SL, hop limit, traffic class, flow
//     label and DGID as OpenSM's getters read them (ReadPathRecord).
//   - mcast.go: OpenSM's MCMemberRecord component mask bits and attribute
//     IDs, libibmad's MulticastForwardingTable ID and MLID range, and an
//     MCMemberRecord written with OpenSM's own setters.
//   - pmcap.go: OpenSM's PerfMgt ClassPortInfo capability bits
//     (CapabilityMask and CapabilityMask2) that the link health reads.
package osmref
