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
