package sim

import (
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

func saGet(c *client, f *Fabric, attr ibmad.AttrID, mask uint64, fill func([]byte)) (*ibmad.Response, error) {
	q := ibmad.NewSAGet(attr, mask)
	fill(q.Data[:])
	req := &ibmad.Request{Addr: ibmad.GSIAddress(f.SMLID(), 0)}
	_ = q.MarshalTo(req.MAD[:])
	return c.do(req)
}

func TestSAPathRecordAndNodeRecord(t *testing.T) {
	f := mustFabric(t, "two-switch.net", Options{})
	c := attach(t, f, "host3")
	src, _ := c.tr.Port()
	h4 := f.Node("host4")
	resp, err := saGet(c, f, ibmad.AttrPathRecord, ibmad.PRCompDGID|ibmad.PRCompSGID, func(b []byte) {
		pr := ibmad.PathRecord{DGID: ibmad.MakeGID(ibmad.DefaultGIDPrefix, h4.Ports[1].GUID), SGID: src.GID()}
		_ = pr.MarshalTo(b)
	})
	if err != nil || resp.MAD.Status() != 0 {
		t.Fatalf("PathRecord: %v %s", err, resp.MAD.Status())
	}
	var pr ibmad.PathRecord
	_ = pr.UnmarshalBinary(resp.MAD.SAData())
	if want, _ := f.LIDOf("host4", 1); pr.DLID != want || pr.SLID != src.LID {
		t.Fatalf("PathRecord DLID %d SLID %d, want %d %d", pr.DLID, pr.SLID, want, src.LID)
	}
	resp, _ = saGet(c, f, ibmad.AttrPathRecord, ibmad.PRCompDGID, func(b []byte) {
		pr := ibmad.PathRecord{DGID: ibmad.MakeGID(ibmad.DefaultGIDPrefix, 0xdead)}
		_ = pr.MarshalTo(b)
	})
	if resp.MAD.Status().ClassSpecific() != ibmad.SAStatusNoRecords {
		t.Fatalf("unknown GID: status %s", resp.MAD.Status())
	}
	byDesc := func(desc string) (*ibmad.Response, error) {
		return saGet(c, f, ibmad.AttrNodeRecord, ibmad.NRCompNodeDesc, func(b []byte) {
			nr := ibmad.NodeRecord{NodeDescription: ibmad.NewNodeDescription(desc)}
			_ = nr.MarshalTo(b)
		})
	}
	resp, err = byDesc("sw2")
	var nr ibmad.NodeRecord
	_ = nr.UnmarshalBinary(resp.MAD.SAData())
	if swLID, _ := f.LIDOf("sw2", 0); err != nil || resp.MAD.Status() != 0 || nr.LID != swLID || nr.NodeInfo.NodeGUID != f.Node("sw2").GUID {
		t.Fatalf("NodeRecord sw2: %v %s %+v", err, resp.MAD.Status(), nr)
	}
	if resp, _ = byDesc("host5"); resp.MAD.Status().ClassSpecific() != ibmad.SAStatusTooManyRecords {
		t.Fatalf("two-port host5: status %s, want TooManyRecords as OpenSM answers a Get", resp.MAD.Status())
	}
	if resp, _ = byDesc("nobody"); resp.MAD.Status().ClassSpecific() != ibmad.SAStatusNoRecords {
		t.Fatalf("unknown node: status %s", resp.MAD.Status())
	}
	// LocalPortNum picks one port of host5; bits that name no component
	// (1, 15: the old wrong NodeDescription bit) are ignored, as OpenSM
	// ignores them (ibmad/ibsim's TestOracleSimSAEqualsOpenSM is the
	// oracle for all of this).
	resp, err = saGet(c, f, ibmad.AttrNodeRecord, ibmad.NRCompNodeDesc|ibmad.NRCompLocalPortNum, func(b []byte) {
		nr := ibmad.NodeRecord{NodeDescription: ibmad.NewNodeDescription("host5")}
		nr.NodeInfo.LocalPortNum = 2
		_ = nr.MarshalTo(b)
	})
	_ = nr.UnmarshalBinary(resp.MAD.SAData())
	if want, _ := f.LIDOf("host5", 2); err != nil || resp.MAD.Status() != 0 || nr.LID != want || nr.NodeInfo.LocalPortNum != 2 {
		t.Fatalf("NodeRecord host5 port 2: %v %s %+v", err, resp.MAD.Status(), nr)
	}
	for _, mask := range []uint64{1 << 1, 1 << 15, 1<<1 | 1<<15 | 1<<63} {
		resp, _ = saGet(c, f, ibmad.AttrNodeRecord, mask, func(b []byte) {
			nr := ibmad.NodeRecord{NodeDescription: ibmad.NewNodeDescription("host1")}
			_ = nr.MarshalTo(b)
		})
		if resp.MAD.Status().ClassSpecific() != ibmad.SAStatusTooManyRecords {
			t.Fatalf("mask %#x names no component: status %s, want TooManyRecords (every record)", mask, resp.MAD.Status())
		}
	}
}
