package agent

import (
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
	"github.com/ibtracer/ibtracer_exporter/ibmad/madtest"
	"github.com/ibtracer/ibtracer_exporter/internal/fakeclock"
)

type rig struct {
	t   *testing.T
	tr  *madtest.Transport
	e   *ibmad.Engine
	a   *Agent
	out chan *ibmad.Packet
	clk *fakeclock.Clock
}

// newRig runs an agent on a fake transport that captures what it sends
// (newRigOnPort), on a port of nodeType.
func newRig(t *testing.T, nodeType ibmad.NodeType, cfg Config) *rig {
	return newRigOnPort(t, ibmad.PortAttributes{CA: "fake", PortNum: 1, NodeType: nodeType, NodeGUID: 0x1111, PortGUID: 0x1112,
		NodeDesc: "node-a", LID: 42}, cfg)
}

// ask injects a request and returns the response, or nil if none comes.
func (r *rig) ask(class ibmad.MgmtClass, method ibmad.Method, attr ibmad.AttrID, sr *ibmad.SourceRoute, inPort uint8, known bool, slid uint16) *ibmad.Packet {
	r.t.Helper()
	v := ibmad.NewVendorGet(class, ibmad.OUIOpenIB, attr, 0)
	v.Method = method
	v.TID = 0xabc
	if sr != nil {
		_ = sr.MarshalTo(v.Data[:])
	}
	p := &ibmad.Packet{Addr: ibmad.Address{LID: slid, QPN: 1, SL: 2, PKeyIndex: 1}, InPort: inPort, InPortKnown: known}
	_ = v.MarshalTo(p.MAD[:])
	r.tr.Inject(p)
	select {
	case resp := <-r.out:
		return resp
	case <-time.After(200 * time.Millisecond):
		return nil
	}
}

func route(hop uint8, ports ...uint8) *ibmad.SourceRoute {
	sr := &ibmad.SourceRoute{HopCount: hop}
	copy(sr.InPort[:], ports)
	return sr
}

func decode(t *testing.T, p *ibmad.Packet) ibmad.SourceRoute {
	t.Helper()
	var sr ibmad.SourceRoute
	if err := sr.UnmarshalBinary(p.MAD.VendorData()); err != nil {
		t.Fatal(err)
	}
	return sr
}

func TestSourceRouteVerdicts(t *testing.T) {
	r := newRig(t, ibmad.NodeTypeCA, Config{})
	for _, tc := range []struct {
		name   string
		sr     *ibmad.SourceRoute
		in     uint8
		known  bool
		status ibmad.Status
		result string
	}{
		{"expected port", route(3, 1, 5, 2), 2, true, ibmad.StatusOK, ResultOK},
		{"other port: status 7", route(3, 1, 5, 2), 1, true, ibmad.StatusInvalidField, ResultMismatch},
		{"hop count 0", route(0), 1, true, ibmad.StatusInvalidField, ResultBadHopCount},
		{"hop count 65", route(65), 1, true, ibmad.StatusInvalidField, ResultBadHopCount},
		{"ingress unknown: never status 7", route(2, 9, 9), 1, false, ibmad.StatusOK, ResultOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := r.ask(ibmad.ClassIBTracer, ibmad.MethodGet, ibmad.AttrSourceRoute, tc.sr, tc.in, tc.known, 7)
			if resp == nil {
				t.Fatal("no answer")
			}
			if resp.MAD.Status() != tc.status || resp.MAD.Method() != ibmad.MethodGetResp || resp.MAD.TID() != 0xabc {
				t.Fatalf("status %s method %s", resp.MAD.Status(), resp.MAD.Method())
			}
			if resp.Addr.LID != 7 || resp.Addr.QPN != 1 || resp.Addr.QKey != ibmad.QP1QKey || resp.Addr.SL != 2 || resp.Addr.PKeyIndex != 1 {
				t.Fatalf("response address %+v", resp.Addr)
			}
			sr := decode(t, resp)
			if sr.ExtVersion != 1 || sr.NodeGUID != 0x1111 || sr.PortGUID != 0x1112 || sr.BaseLID != 42 ||
				sr.NodeDescription.String() != "node-a" || sr.RecvTimeUnixNs != uint64(r.clk.Now().UnixNano()) || sr.IsSwitch() {
				t.Fatalf("extension %+v", sr)
			}
			if tc.known && (sr.ActualInPort != tc.in || !sr.IngressKnown()) {
				t.Fatalf("actual in-port %d known %v", sr.ActualInPort, sr.IngressKnown())
			}
			if !tc.known && (sr.IngressKnown() || sr.ActualInPort != 0) {
				t.Fatalf("claims to know the port: %+v", sr)
			}
			// The seed's bytes 0..65 carry the tracer's data back.
			if sr.HopCount != tc.sr.HopCount || sr.InPort != tc.sr.InPort {
				t.Fatal("hop count or InPort[] not echoed")
			}
		})
	}
	st := r.a.Stats()
	if st.Requests[[2]string{"SourceRoute", ResultOK}] != 2 || st.Requests[[2]string{"SourceRoute", ResultMismatch}] != 1 ||
		st.Requests[[2]string{"SourceRoute", ResultBadHopCount}] != 2 {
		t.Fatalf("counters %v", st.Requests)
	}
}

func TestSwitchAgent(t *testing.T) {
	r := newRig(t, ibmad.NodeTypeSwitch, Config{})
	resp := r.ask(ibmad.ClassIBTracer, ibmad.MethodGet, ibmad.AttrSourceRoute, route(2, 1, 4), 0, false, 3)
	sr := decode(t, resp)
	if resp.MAD.Status() != 0 || !sr.IsSwitch() || sr.IngressKnown() {
		t.Fatalf("status %s flags %#x", resp.MAD.Status(), sr.Flags)
	}
}

func TestClassPortInfoAndRefusals(t *testing.T) {
	r := newRig(t, ibmad.NodeTypeCA, Config{})
	resp := r.ask(ibmad.ClassIBTracer, ibmad.MethodGet, ibmad.AttrClassPortInfo, nil, 1, true, 3)
	var cpi ibmad.ClassPortInfo
	_ = cpi.UnmarshalBinary(resp.MAD.VendorData())
	if resp.MAD.Status() != 0 || cpi.BaseVersion != 1 || cpi.ClassVersion != 1 {
		t.Fatalf("ClassPortInfo: %s %+v", resp.MAD.Status(), cpi)
	}
	if resp = r.ask(ibmad.ClassIBTracer, ibmad.MethodGet, 0x0099, nil, 1, true, 3); resp.MAD.Status() != ibmad.StatusMethodAttrUnsupp {
		t.Fatalf("unknown attribute: %s", resp.MAD.Status())
	}
	if resp = r.ask(ibmad.ClassIBTracer, ibmad.MethodSet, ibmad.AttrSourceRoute, route(1, 1), 1, true, 3); resp.MAD.Status() != ibmad.StatusMethodUnsupported {
		t.Fatalf("Set: %s", resp.MAD.Status())
	}
}

func TestRateLimitPerSource(t *testing.T) {
	r := newRig(t, ibmad.NodeTypeCA, Config{RatePerSource: 10, Burst: 3})
	answered := 0
	for i := 0; i < 5; i++ {
		if r.ask(ibmad.ClassIBTracer, ibmad.MethodGet, ibmad.AttrClassPortInfo, nil, 1, true, 9) != nil {
			answered++
		}
	}
	if answered != 3 {
		t.Fatalf("answered %d of 5 with a burst of 3", answered)
	}
	if r.ask(ibmad.ClassIBTracer, ibmad.MethodGet, ibmad.AttrClassPortInfo, nil, 1, true, 10) == nil {
		t.Fatal("another source was limited too")
	}
	r.clk.Add(time.Second) // 10 more tokens
	if r.ask(ibmad.ClassIBTracer, ibmad.MethodGet, ibmad.AttrClassPortInfo, nil, 1, true, 9) == nil {
		t.Fatal("the bucket did not refill")
	}
	if d := r.a.Stats().Drops[DropRateLimited]; d != 2 {
		t.Fatalf("%d rate-limited drops", d)
	}
}

// TestPingLikeIbpingServer: the answer ibping -S gives (docs/protocol.md, "ibping").
func TestPingLikeIbpingServer(t *testing.T) {
	r := newRig(t, ibmad.NodeTypeCA, Config{Ping: true, Hostname: "vm.(none)"})
	for _, m := range []ibmad.Method{ibmad.MethodGet, ibmad.MethodSet} {
		resp := r.ask(ibmad.ClassOpenIBPing, m, ibmad.AttrPing, nil, 1, true, 5)
		if resp == nil {
			t.Fatal("no pong")
		}
		b := resp.MAD[:]
		if b[1] != 0x32 || b[2] != 1 || b[3] != 0x81 || b[4] != 0 || b[5] != 0 || b[37] != 0 || b[38] != 0x14 || b[39] != 0x05 {
			t.Fatalf("header % x", b[:40])
		}
		if string(b[40:49]) != "vm.(none)" || b[49] != 0 {
			t.Fatalf("data %q", b[40:60])
		}
	}
	if r.a.Stats().Pings != 2 {
		t.Fatal("pings not counted")
	}
}

// TestRateLimitPerSourceGID: requesters known by GID (LID 0 on RoCE-like
// fabrics, or the router's LID for a requester beyond it) each get their
// own bucket: the source is its GID when it came with a GRH.
func TestRateLimitPerSourceGID(t *testing.T) {
	r := newRig(t, ibmad.NodeTypeCA, Config{RatePerSource: 10, Burst: 2})
	ask := func(lid uint16, gid string) bool {
		t.Helper()
		g, err := ibmad.ParseGID(gid)
		if err != nil {
			t.Fatal(err)
		}
		v := ibmad.NewVendorGet(ibmad.ClassIBTracer, ibmad.OUIOpenIB, ibmad.AttrClassPortInfo, 0)
		p := &ibmad.Packet{Addr: ibmad.Address{LID: lid, QPN: 1, GRHPresent: true, GID: g, HopLimit: 255},
			InPort: 1, InPortKnown: true}
		_ = v.MarshalTo(p.MAD[:])
		r.tr.Inject(p)
		select {
		case <-r.out:
			return true
		case <-time.After(200 * time.Millisecond):
			return false
		}
	}
	for _, src := range []struct {
		lid uint16
		gid string
	}{{0, "fe80::1"}, {0, "fe80::2"}, {7, "fec0::1:3"}, {7, "fec0::1:4"}} {
		answered := 0
		for range 3 {
			if ask(src.lid, src.gid) {
				answered++
			}
		}
		if answered != 2 {
			t.Errorf("source lid %d gid %s: answered %d of 3 with a burst of 2 (its own bucket)", src.lid, src.gid, answered)
		}
	}
}
