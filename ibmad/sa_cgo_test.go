//go:build cgo && ibcref

// Cross-check of every SA constant the client and the simulator share
// (component mask bits, attribute IDs, class, class version, status codes)
// against OpenSM's iba/ib_types.h (Debian libopensm-dev) and libibmad's /
// libibumad's headers, through the test-only cgo package internal/osmref.

package ibmad_test

import (
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	ref "github.com/ibtracer/ibtracer_exporter/ibmad/internal/osmref"
)

func TestSAComponentMasksMatchOpenSM(t *testing.T) {
	sameAsRef(t, "%s = %#x, OpenSM's ib_types.h has %#x", []refCase[uint64]{
		{"PRCompDGID", ibmad.PRCompDGID, ref.PRDGID},
		{"PRCompSGID", ibmad.PRCompSGID, ref.PRSGID},
		{"PRCompDLID", ibmad.PRCompDLID, ref.PRDLID},
		{"PRCompSLID", ibmad.PRCompSLID, ref.PRSLID},
		{"PRCompNumbPath", ibmad.PRCompNumbPath, ref.PRNumbPath},
		{"NRCompLID", ibmad.NRCompLID, ref.NRLID},
		{"NRCompNodeGUID", ibmad.NRCompNodeGUID, ref.NRNodeGUID},
		{"NRCompPortGUID", ibmad.NRCompPortGUID, ref.NRPortGUID},
		{"NRCompLocalPortNum", ibmad.NRCompLocalPortNum, ref.NRPortNum},
		{"NRCompNodeDesc", ibmad.NRCompNodeDesc, ref.NRNodeDesc},
	})
}

func TestSAAttributesMatchOpenSMAndLibibmad(t *testing.T) {
	for _, c := range []struct {
		name     string
		ours     ibmad.AttrID
		osm, mad uint16
		umad     uint16
	}{
		{"AttrClassPortInfo", ibmad.AttrClassPortInfo, ref.OSMAttrClassPortInfo, ref.MadAttrClassPortInfo, ref.UmadAttrClassPortInfo},
		{"AttrNodeRecord", ibmad.AttrNodeRecord, ref.OSMAttrNodeRecord, ref.MadAttrNodeRecord, ref.UmadAttrNodeRecord},
		{"AttrPathRecord", ibmad.AttrPathRecord, ref.OSMAttrPathRecord, ref.MadAttrPathRecord, ref.UmadAttrPathRecord},
	} {
		if uint16(c.ours) != c.osm || uint16(c.ours) != c.mad || uint16(c.ours) != c.umad {
			t.Errorf("%s = %#x; OpenSM %#x, libibmad %#x, libibumad %#x", c.name, uint16(c.ours), c.osm, c.mad, c.umad)
		}
	}
	if uint8(ibmad.ClassSubnAdm) != ref.OSMClassSubnAdm || uint8(ibmad.ClassSubnAdm) != ref.MadClassSubnAdm {
		t.Errorf("ClassSubnAdm = %#x; OpenSM %#x, libibmad %#x", uint8(ibmad.ClassSubnAdm), ref.OSMClassSubnAdm, ref.MadClassSubnAdm)
	}
	if q := ibmad.NewSAGet(ibmad.AttrNodeRecord, 0); q.ClassVersion != ref.UmadSAClassVersion {
		t.Errorf("SA class version %d, libibumad %d", q.ClassVersion, ref.UmadSAClassVersion)
	}
}

func TestSAStatusesMatchOpenSM(t *testing.T) {
	sa := func(code uint8) uint16 { return uint16(code) << 8 }
	sameAsRef(t, "%s: status word %#04x, OpenSM %#04x", []refCase[uint16]{
		{"SAStatusNoResources", sa(ibmad.SAStatusNoResources), ref.StatusNoResources},
		{"SAStatusReqInvalid", sa(ibmad.SAStatusReqInvalid), ref.StatusReqInvalid},
		{"SAStatusNoRecords", sa(ibmad.SAStatusNoRecords), ref.StatusNoRecords},
		{"SAStatusTooManyRecords", sa(ibmad.SAStatusTooManyRecords), ref.StatusTooManyRecords},
		{"SAStatusInvalidGID", sa(ibmad.SAStatusInvalidGID), ref.StatusInvalidGID},
		{"SAStatusInsufficient", sa(ibmad.SAStatusInsufficient), ref.StatusInsufComps},
		{"SAStatusReqDenied", sa(ibmad.SAStatusReqDenied), ref.StatusReqDenied},
		{"StatusMethodUnsupported", uint16(ibmad.StatusMethodUnsupported), ref.StatusUnsupMethod},
		{"StatusMethodAttrUnsupp", uint16(ibmad.StatusMethodAttrUnsupp), ref.StatusUnsupMethodAttr},
	})
	// And the class-specific accessor reads what OpenSM writes.
	if got := ibmad.Status(ref.StatusTooManyRecords).ClassSpecific(); got != ibmad.SAStatusTooManyRecords {
		t.Errorf("Status(%#04x).ClassSpecific() = %d", ref.StatusTooManyRecords, got)
	}
}

// Cross-check of the SA record layouts, component mask bits, attribute
// IDs and RMPP constants the client and the simulator share, against
// OpenSM's iba/ib_types.h and libibmad's / libibumad's headers.

// fieldOffset marshals v with one field set to a marker and reports the
// first byte that changed, so that our codec's layout is measured, not
// restated.
func fieldOffset(t *testing.T, zero, marked interface{ MarshalBinary() ([]byte, error) }) int {
	t.Helper()
	a, err := zero.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	b, err := marked.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// refCase is one value of ours and what a reference header says it is.
type refCase[T comparable] struct {
	name      string
	ours, ref T
}

// sameAsRef reports, with format (name, ours, the header's), every case
// whose value differs from the header's.
func sameAsRef[T comparable](t *testing.T, format string, cases []refCase[T]) {
	t.Helper()
	for _, c := range cases {
		if c.ours != c.ref {
			t.Errorf(format, c.name, c.ours, c.ref)
		}
	}
}

func TestSARecordLayoutsMatchOpenSM(t *testing.T) {
	pad := func(n int) int { return 8 * int(ibmad.AttrOffsetOf(n)) }
	sameAsRef(t, "%s: ours %d, OpenSM's ib_types.h %d", []refCase[int]{
		{"NodeRecord padded size", pad(ibmad.NodeRecordSize), ref.SizeNodeRecord},
		{"LFTRecord padded size", pad(ibmad.LFTRecordSize), ref.SizeLFTRecord},
		{"LinkRecord padded size", pad(ibmad.LinkRecordSize), ref.SizeLinkRecord},
		{"PortInfoRecord padded size", pad(ibmad.PortInfoRecordSize), ref.SizePortInfoRecord},
		{"SwitchInfoRecord padded size", pad(ibmad.SwitchInfoRecordSize), 8 * ((ref.SizeSwitchInfoRecord + 7) / 8)},
		{"PortInfo size", ibmad.PortInfoSize, ref.SizePortInfo},
		{"SwitchInfoRecord unpadded size", ibmad.SwitchInfoRecordSize, ref.SizeSwitchInfoRecord},
		{"LFTRecord.Block", fieldOffset(t, &ibmad.LFTRecord{}, &ibmad.LFTRecord{Block: 0x100}), ref.OffLFTRBlock},
		{"LFTRecord.LFT", fieldOffset(t, &ibmad.LFTRecord{}, &ibmad.LFTRecord{LFT: ibmad.LFTBlock{1}}), ref.OffLFTRLFT},
		{"LinkRecord.FromPort", fieldOffset(t, &ibmad.LinkRecord{}, &ibmad.LinkRecord{FromPort: 1}), ref.OffLRFromPort},
		{"LinkRecord.ToPort", fieldOffset(t, &ibmad.LinkRecord{}, &ibmad.LinkRecord{ToPort: 1}), ref.OffLRToPort},
		{"LinkRecord.ToLID", fieldOffset(t, &ibmad.LinkRecord{}, &ibmad.LinkRecord{ToLID: 0x100}), ref.OffLRToLID},
		{"PortInfoRecord.PortNum", fieldOffset(t, &ibmad.PortInfoRecord{}, &ibmad.PortInfoRecord{PortNum: 1}), ref.OffPIRPortNum},
		{"PortInfoRecord.Options", fieldOffset(t, &ibmad.PortInfoRecord{}, &ibmad.PortInfoRecord{Options: 1}), ref.OffPIROptions},
		{"PortInfoRecord.PortInfo", fieldOffset(t, &ibmad.PortInfoRecord{}, &ibmad.PortInfoRecord{PortInfo: ibmad.PortInfo{MKey: 1 << 63}}), ref.OffPIRPortInfo},
		{"SwitchInfoRecord.SwitchInfo", fieldOffset(t, &ibmad.SwitchInfoRecord{}, &ibmad.SwitchInfoRecord{SwitchInfo: ibmad.SwitchInfo{LinearFDBCap: 0x100}}), ref.OffSWIRSwitchInfo},
		{"NodeRecord.NodeInfo", fieldOffset(t, &ibmad.NodeRecord{}, &ibmad.NodeRecord{NodeInfo: ibmad.NodeInfo{BaseVersion: 1}}), ref.OffNRNodeInfo},
		{"NodeRecord.NodeDescription", fieldOffset(t, &ibmad.NodeRecord{}, &ibmad.NodeRecord{NodeDescription: ibmad.NewNodeDescription("x")}), ref.OffNRNodeDesc},
	})
}

func TestSARecordMasksAndAttributesMatchOpenSM(t *testing.T) {
	sameAsRef(t, "%s = %#x, OpenSM %#x", []refCase[uint64]{
		{"LFTRCompLID", ibmad.LFTRCompLID, ref.LFTRLID},
		{"LFTRCompBlock", ibmad.LFTRCompBlock, ref.LFTRBlock},
		{"LRCompFromLID", ibmad.LRCompFromLID, ref.LRFromLID},
		{"LRCompFromPort", ibmad.LRCompFromPort, ref.LRFromPort},
		{"LRCompToPort", ibmad.LRCompToPort, ref.LRToPort},
		{"LRCompToLID", ibmad.LRCompToLID, ref.LRToLID},
		{"PIRCompLID", ibmad.PIRCompLID, ref.PIRLID},
		{"PIRCompPortNum", ibmad.PIRCompPortNum, ref.PIRPortNum},
		{"PIRCompOptions", ibmad.PIRCompOptions, ref.PIROptions},
		{"SWIRCompLID", ibmad.SWIRCompLID, ref.SWIRLID},
	})
	for _, c := range []struct {
		name     string
		ours     ibmad.AttrID
		osm, mad uint16
	}{
		{"AttrPortInfoRecord", ibmad.AttrPortInfoRecord, ref.OSMAttrPortInfoRecord, ref.MadAttrPortInfoRecord},
		{"AttrSwitchInfoRecord", ibmad.AttrSwitchInfoRecord, ref.OSMAttrSwitchInfoRecord, ref.MadAttrSwitchInfoRecord},
		{"AttrLFTRecord", ibmad.AttrLFTRecord, ref.OSMAttrLFTRecord, ref.MadAttrLFTRecord},
		{"AttrLinkRecord", ibmad.AttrLinkRecord, ref.OSMAttrLinkRecord, ref.MadAttrLinkRecord},
	} {
		if uint16(c.ours) != c.osm || uint16(c.ours) != c.mad {
			t.Errorf("%s = %#x; OpenSM %#x, libibmad %#x", c.name, uint16(c.ours), c.osm, c.mad)
		}
	}
}

func TestRMPPConstantsMatchOpenSM(t *testing.T) {
	sameAsRef(t, "%s = %d, headers %d", []refCase[int]{
		{"RMPPTypeData", ibmad.RMPPTypeData, ref.RMPPTypeData},
		{"RMPPTypeAck", ibmad.RMPPTypeAck, ref.RMPPTypeAck},
		{"RMPPTypeStop", ibmad.RMPPTypeStop, ref.RMPPTypeStop},
		{"RMPPTypeAbort", ibmad.RMPPTypeAbort, ref.RMPPTypeAbort},
		{"RMPPFlagActive", ibmad.RMPPFlagActive, ref.RMPPFlagActive},
		{"RMPPFlagFirst", ibmad.RMPPFlagFirst, ref.RMPPFlagFirst},
		{"RMPPFlagLast", ibmad.RMPPFlagLast, ref.RMPPFlagLast},
		{"RMPPSegPayload (libibumad)", ibmad.RMPPSegPayload, ref.UmadRMPPData},
		{"RMPPSegPayload (OpenSM)", ibmad.RMPPSegPayload, ibmad.MADSize - ref.OSMRMPPHdrSize},
		{"SADataOffset", ibmad.SADataOffset, ref.MadSADataOffs},
		{"MethodGetTable", int(ibmad.MethodGetTable), ref.OSMMethodGetTable},
		{"MethodGetTableResp", int(ibmad.MethodGetTableResp), ref.OSMMethodGetTableResp},
	})
}
