//go:build cgo && ibcref

package ibsimtest_test

import (
	"bytes"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/ibsim/ibsimtest"
	ref "github.com/ibtracer/ibtracer_exporter/ibmad/internal/osmref"
)

// The multicast constants the join and the multicast trace use, against
// OpenSM's iba/ib_types.h and libibmad's mad.h: component mask bits,
// attribute IDs, the MLID range, and the MCMemberRecord layout as OpenSM's
// own setters write it.
func TestMulticastConstantsMatchOpenSMAndLibibmad(t *testing.T) {
	for _, c := range []struct {
		name      string
		ours, ref uint64
	}{
		{"MCCompMGID", ibsimtest.MCCompMGID, ref.MCRMGID},
		{"MCCompPortGID", ibsimtest.MCCompPortGID, ref.MCRPortGID},
		{"MCCompQKey", ibsimtest.MCCompQKey, ref.MCRQKey},
		{"MCCompMLID", ibsimtest.MCCompMLID, ref.MCRMLID},
		{"MCCompTClass", ibsimtest.MCCompTClass, ref.MCRTClass},
		{"MCCompPKey", ibsimtest.MCCompPKey, ref.MCRPKey},
		{"MCCompSL", ibsimtest.MCCompSL, ref.MCRSL},
		{"MCCompFlowLabel", ibsimtest.MCCompFlowLabel, ref.MCRFlow},
		{"MCCompJoinState", ibsimtest.MCCompJoinState, ref.MCRJoinState},
		{"AttrMCMemberRecord", uint64(ibsimtest.AttrMCMemberRecord), uint64(ref.OSMAttrMCMemberRecord)},
		{"AttrMulticastForwardingTable (OpenSM)", uint64(ibmad.AttrMulticastForwardingTable), uint64(ref.OSMAttrMcastFwdTbl)},
		{"AttrMulticastForwardingTable (libibmad)", uint64(ibmad.AttrMulticastForwardingTable), uint64(ref.MadAttrMulticastForwTbl)},
		{"MLIDBase", ibmad.MLIDBase, uint64(ref.MadMinMcastLID)},
		{"MLIDMax", ibmad.MLIDMax, uint64(ref.MadMaxMcastLID)},
	} {
		if c.ours != c.ref {
			t.Errorf("%s = %#x, the reference has %#x", c.name, c.ours, c.ref)
		}
	}

	var mgid, port ibmad.GID
	for i := range mgid {
		mgid[i], port[i] = byte(0xf0+i), byte(i+1)
	}
	rec := ibsimtest.MCMemberRecord{MGID: mgid, PortGID: port, QKey: 0x0B1B, MLID: 0xC012, TClass: 0x5a, PKey: 0xFFFF,
		SL: 9, FlowLabel: 0xabcde, Scope: 2, JoinState: ibsimtest.JoinFullMember}
	ours := make([]byte, ibsimtest.MCMemberRecordSize)
	if err := rec.MarshalTo(ours); err != nil {
		t.Fatal(err)
	}
	want := ref.MCMemberRecordBytes(mgid, port, rec.QKey, rec.MLID, rec.TClass, rec.PKey, rec.SL, rec.FlowLabel, rec.Scope, rec.JoinState)
	if !bytes.Equal(ours, want) {
		t.Errorf("MCMemberRecord bytes:\n ours   % x\n OpenSM % x", ours, want)
	}
}
