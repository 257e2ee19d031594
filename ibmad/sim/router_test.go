package sim

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// twoSubnets is package simtest's TwoSubnets, which this package's tests
// cannot import: a fat tree with router R0 on leaf L1 and RemoteSubnet
// behind it.
func twoSubnets(opts Options) (local, remote *Fabric, r *Router, err error) {
	t, err := FatTree2(2, 1, 2, 1)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := AttachRouter(t, "R0", "L1"); err != nil {
		return nil, nil, nil, err
	}
	lo := opts
	lo.GIDPrefix, lo.SMNode = LocalSubnetPrefix, ""
	if local, err = New(t, lo); err != nil {
		return nil, nil, nil, err
	}
	remote, r, err = JoinRemoteSubnet(local, "R0", opts)
	return local, remote, r, err
}

// remoteHostGUID is the port GUID of host R-H<h> of RemoteSubnet.
func remoteHostGUID(h int) ibmad.GUID {
	return RemoteSubnet("R0").Node(fmt.Sprintf("R-H%d", h)).GUID + 1
}

// TestRouterJoinsTwoSubnets: the local SA answers a PathRecord to a GID of
// the remote prefix with the router port's LID and a hop limit above 1;
// the remote SA, asked through the router with a GRH to its well-known
// GID, answers the path from the remote port to us, ending at the
// router's port there; a router that does not forward drops the query.
// Only our simulator: ibsim has no routers (docs/architecture.md).
func TestRouterJoinsTwoSubnets(t *testing.T) {
	local, remote, r, err := twoSubnets(Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := attach(t, local, "H0-0")
	src, _ := c.tr.Port()
	if src.GIDPrefix != LocalSubnetPrefix {
		t.Fatalf("local prefix %#x", src.GIDPrefix)
	}
	dgid := ibmad.MakeGID(RemoteSubnetPrefix, remoteHostGUID(0))
	resp, err := saGet(c, local, ibmad.AttrPathRecord, ibmad.PRCompDGID|ibmad.PRCompSGID, func(b []byte) {
		_ = (&ibmad.PathRecord{DGID: dgid, SGID: src.GID()}).MarshalTo(b)
	})
	if err != nil || resp.MAD.Status() != 0 {
		t.Fatalf("local PathRecord: %v %s", err, resp.MAD.Status())
	}
	var p1 ibmad.PathRecord
	_ = p1.UnmarshalBinary(resp.MAD.SAData())
	rLocal := r.Port(local)
	if p1.DLID != rLocal.LID || p1.SLID != src.LID || p1.DGID != dgid || p1.HopLimit <= 1 {
		t.Fatalf("local PathRecord %+v, want DLID %d (router port), SLID %d, hop limit > 1", p1, rLocal.LID, src.LID)
	}
	remoteSA := func() (*ibmad.Response, error) {
		q := ibmad.NewSAGet(ibmad.AttrPathRecord, ibmad.PRCompDGID|ibmad.PRCompSGID)
		_ = (&ibmad.PathRecord{SGID: dgid, DGID: src.GID()}).MarshalTo(q.Data[:]) // the path back: SGID local there
		a := ibmad.GSIAddress(p1.DLID, p1.SL)
		a.GRHPresent, a.HopLimit, a.GID = true, p1.HopLimit, ibmad.MakeGID(RemoteSubnetPrefix, SAWellKnownGUID)
		req := &ibmad.Request{Addr: a}
		_ = q.MarshalTo(req.MAD[:])
		return c.do(req)
	}
	resp, err = remoteSA()
	if err != nil || resp.MAD.Status() != 0 {
		t.Fatalf("remote PathRecord: %v %s", err, resp.MAD.Status())
	}
	var p2 ibmad.PathRecord
	_ = p2.UnmarshalBinary(resp.MAD.SAData())
	h0, _ := remote.LIDOf("R-H0", 1)
	if rRemote := r.Port(remote); p2.SLID != h0 || p2.DLID != rRemote.LID || p2.SGID != dgid || p2.DGID != src.GID() || p2.HopLimit <= 1 {
		t.Fatalf("remote PathRecord %+v, want SLID %d (R-H0), DLID %d (router port), SGID %s, DGID %s", p2, h0, rRemote.LID, dgid, src.GID())
	}
	if r.Forwarded() != 1 {
		t.Fatalf("router forwarded %d, want 1", r.Forwarded())
	}
	// The local SA knows no router for a third prefix.
	resp, _ = saGet(c, local, ibmad.AttrPathRecord, ibmad.PRCompDGID|ibmad.PRCompSGID, func(b []byte) {
		_ = (&ibmad.PathRecord{DGID: ibmad.MakeGID(0xfec0_0000_0000_00cc, 1), SGID: src.GID()}).MarshalTo(b)
	})
	if resp.MAD.Status().ClassSpecific() != ibmad.SAStatusNoRecords {
		t.Fatalf("unrouted prefix: status %s, want NoRecords", resp.MAD.Status())
	}
	r.SetForwarding(false)
	if _, err = remoteSA(); !errors.Is(err, ibmad.ErrTimeout) {
		t.Fatalf("through a router that does not forward: %v, want a timeout", err)
	}
	if r.Dropped() != 1 || r.Forwarded() != 1 {
		t.Fatalf("router dropped %d forwarded %d, want 1 and 1", r.Dropped(), r.Forwarded())
	}
}

func TestJoinSubnetsRefusesBadPairs(t *testing.T) {
	ft, _ := FatTree2(2, 1, 2, 1)
	if err := AttachRouter(ft, "R0", "L1"); err != nil {
		t.Fatal(err)
	}
	a, err := New(ft, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(RemoteSubnet("R0"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := JoinSubnets(a, b, "R0"); err == nil {
		t.Fatal("joined two subnets with the same prefix")
	}
	c, err := New(RemoteSubnet("R9"), Options{GIDPrefix: RemoteSubnetPrefix})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := JoinSubnets(a, c, "R0"); err == nil {
		t.Fatal("joined through a router one subnet does not have")
	}
	if err := AttachRouter(ft, "R1", "H0-0"); err == nil {
		t.Fatal("attached a router to a CA")
	}
}
