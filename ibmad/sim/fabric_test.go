package sim

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

type client struct {
	t  testing.TB
	tr *Transport
	e  *ibmad.Engine
}

func attach(t testing.TB, f *Fabric, node string) *client {
	t.Helper()
	tr, err := f.Attach(node, 0)
	if err != nil {
		t.Fatal(err)
	}
	e := ibmad.NewEngine(tr, ibmad.Options{Timeout: 50 * time.Millisecond, NoRetry: true})
	t.Cleanup(func() { e.Close() })
	return &client{t: t, tr: tr, e: e}
}

func (c *client) do(req *ibmad.Request) (*ibmad.Response, error) {
	var resp ibmad.Response
	err := c.e.Do(context.Background(), req, &resp)
	return &resp, err
}

func (c *client) lidNodeInfo(lid uint16) (ibmad.NodeInfo, error) {
	req := &ibmad.Request{Addr: ibmad.SMPAddress(lid)}
	_ = ibmad.NewLIDGet(ibmad.AttrNodeInfo, 0).MarshalTo(req.MAD[:])
	resp, err := c.do(req)
	var ni ibmad.NodeInfo
	if err == nil {
		err = ibmad.SMPStatus(&resp.MAD).Err()
	}
	if err == nil {
		err = ni.UnmarshalBinary(resp.MAD.SMPData())
	}
	return ni, err
}

// vendorGet sends a SourceRoute Get to lid and returns the response.
func (c *client) vendorGet(lid uint16) (*ibmad.Response, error) {
	v := ibmad.NewVendorGet(ibmad.ClassIBTracer, ibmad.OUIOpenIB, ibmad.AttrSourceRoute, 0)
	req := &ibmad.Request{Addr: ibmad.GSIAddress(lid, 0)}
	_ = v.MarshalTo(req.MAD[:])
	return c.do(req)
}

// serveIngress registers an agent that answers with the ingress port the
// fabric reported.
func (c *client) serveIngress() {
	err := c.e.Handle(ibmad.ClassIBTracer, 1, ibmad.OUIOpenIB, []ibmad.Method{ibmad.MethodGet}, false,
		func(req, resp *ibmad.Packet) bool {
			resp.MAD = req.MAD
			resp.MAD.SetMethod(ibmad.MethodGetResp)
			resp.MAD[ibmad.VendorDataOffset] = req.InPort
			resp.Addr = req.Addr
			return true
		})
	if err != nil {
		c.t.Fatal(err)
	}
}

func TestLIDRoutedSMPReachesEveryLID(t *testing.T) {
	f := mustFabric(t, "fattree-128.net", Options{LMC: 1})
	c := attach(t, f, "H3-5")
	for _, n := range f.Nodes() {
		for _, p := range n.Ports {
			if p.LID == 0 || (n.IsSwitch() && p.Num != 0) {
				continue
			}
			lo, hi := p.LIDRange()
			for lid := lo; lid <= hi; lid++ {
				ni, err := c.lidNodeInfo(lid)
				if err != nil {
					t.Fatalf("LID %d (%s): %v", lid, n.Name, err)
				}
				if ni.NodeGUID != n.GUID || (!n.IsSwitch() && ni.LocalPortNum != p.Num) {
					t.Fatalf("LID %d answered by %s port %d, want %s port %d", lid, ni.NodeGUID, ni.LocalPortNum, n.GUID, p.Num)
				}
			}
		}
	}
	if lo, hi := f.Node("H0-0").Ports[1].LIDRange(); hi != lo+1 || lo%2 != 0 {
		t.Fatalf("LMC 1 range %d-%d not aligned", lo, hi)
	}
}

func TestRoutesSpreadOverSpinesAndParallelLinks(t *testing.T) {
	// fattree-mini: two leaves, two spines, two parallel links per pair.
	f := mustFabric(t, "fattree-mini.net", Options{})
	lft := f.LFT("L0")
	used := map[uint8]int{}
	for _, h := range []string{"H1-0", "H1-1", "H1-2"} {
		lid, _ := f.LIDOf(h, 1)
		used[lft[lid]]++
	}
	if len(used) != 3 {
		t.Fatalf("L0 sends L1's three hosts over %v; want three different uplinks", used)
	}
	spines := map[string]bool{}
	for port := range used {
		spines[f.Node("L0").Ports[port].Remote.Node.Name] = true
	}
	if len(spines) != 2 {
		t.Fatalf("L1's hosts leave L0 through %v, want both spines", spines)
	}
	// The 128-host tree: every leaf spreads the other leaves' hosts evenly
	// over its 8 uplinks (120 remote hosts: 15 each).
	f = mustFabric(t, "fattree-128.net", Options{})
	for _, leaf := range []string{"L0", "L7", "L15"} {
		lft := f.LFT(leaf)
		count := map[uint8]int{}
		for _, lid := range f.CALIDs() {
			p := f.PortByLID(lid)
			if p.Remote.Node.Name != leaf {
				count[lft[lid]]++
			}
		}
		for port, n := range count {
			if n != 15 {
				t.Fatalf("%s: uplink %d carries %d hosts (%v), want 15 each", leaf, port, n, count)
			}
		}
	}
}

func TestVendorMADDeliveredWithTrueIngressPort(t *testing.T) {
	f := mustFabric(t, "two-switch.net", Options{})
	tracer := attach(t, f, "host1")
	for _, tc := range []struct {
		node   string
		wantIn uint8
	}{
		{"host2", 1}, // host1 - sw1 - sw2 - host2
		{"host5", 1}, // host5's port 1 faces sw1
		{"sw2", 3},   // sw1 reaches sw2 over port 3 or 5: minhop picks the less loaded
		{"sw1", 1},   // host1 enters sw1 on port 1
	} {
		agent := attach(t, f, tc.node)
		agent.serveIngress()
		lid, _ := f.LIDOf(tc.node, 0)
		resp, err := tracer.vendorGet(lid)
		if err != nil {
			t.Fatalf("%s: %v", tc.node, err)
		}
		got := resp.MAD[ibmad.VendorDataOffset]
		sw1 := f.Node("sw1")
		want := tc.wantIn
		if tc.node == "sw2" { // whichever parallel link sw1's LFT chose
			want = sw1.Ports[f.LFT("sw1")[lid]].Remote.Num
		}
		if got != want || resp.MAD.Status() != 0 {
			t.Errorf("%s: ingress %d status %s, want %d", tc.node, got, resp.MAD.Status(), want)
		}
	}
}

func TestNoAgentGetsUnsupportedStatus(t *testing.T) {
	f := mustFabric(t, "chain-5.net", Options{})
	c := attach(t, f, "hostA")
	lid, _ := f.LIDOf("hostB", 1)
	resp, err := c.vendorGet(lid)
	if err != nil {
		t.Fatal(err)
	}
	if resp.MAD.Status() != ibmad.StatusMethodAttrUnsupp || resp.MAD.Method() != ibmad.MethodGetResp {
		t.Fatalf("status %s method %s, want 0x000c GetResp as the kernel answers", resp.MAD.Status(), resp.MAD.Method())
	}
	// An agent that registers and then goes away.
	agent := attach(t, f, "hostB")
	agent.serveIngress()
	if resp, err = c.vendorGet(lid); err != nil || resp.MAD.Status() != 0 {
		t.Fatalf("with agent: %v %s", err, resp.MAD.Status())
	}
	agent.e.Close()
	if resp, err = c.vendorGet(lid); err != nil || resp.MAD.Status() != ibmad.StatusMethodAttrUnsupp {
		t.Fatalf("after the agent left: %v %v", err, resp.MAD.Status())
	}
}

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

func readPortCounters(t *testing.T, c *client, lid uint16, port uint8) ibmad.PortCounters {
	t.Helper()
	q := ibmad.NewPerfMgtGet(ibmad.AttrPortCounters)
	q.Data[1] = port
	req := &ibmad.Request{Addr: ibmad.GSIAddress(lid, 0)}
	_ = q.MarshalTo(req.MAD[:])
	resp, err := c.do(req)
	if err != nil || resp.MAD.Status() != 0 {
		t.Fatalf("PortCounters %d/%d: %v %v", lid, port, err, resp.MAD.Status())
	}
	var pc ibmad.PortCounters
	_ = pc.UnmarshalBinary(resp.MAD.PerfMgtData())
	return pc
}

func TestPerfMgtCountersMove(t *testing.T) {
	f := mustFabric(t, "chain-5.net", Options{})
	c := attach(t, f, "hostA")
	s3, _ := f.LIDOf("s3", 0)
	hostB, _ := f.LIDOf("hostB", 1)
	before := readPortCounters(t, c, s3, 2) // s3 port 2 faces s4: on the way to hostB
	for i := 0; i < 10; i++ {
		if _, err := c.lidNodeInfo(hostB); err != nil {
			t.Fatal(err)
		}
	}
	after := readPortCounters(t, c, s3, 2)
	// 10 requests out of port 2, 10 responses in; the counter reads
	// themselves come in through port 1, not port 2.
	if after.PortXmitPkts-before.PortXmitPkts != 10 || after.PortRcvPkts-before.PortRcvPkts != 10 {
		t.Fatalf("xmit +%d rcv +%d, want +10 each", after.PortXmitPkts-before.PortXmitPkts, after.PortRcvPkts-before.PortRcvPkts)
	}
	if after.PortXmitData-before.PortXmitData != 10*madWords {
		t.Fatalf("xmit data +%d", after.PortXmitData-before.PortXmitData)
	}
}

func TestFaultDropRate(t *testing.T) {
	f := mustFabric(t, "chain-5.net", Options{Seed: 1})
	c := attach(t, f, "hostA")
	hostB, _ := f.LIDOf("hostB", 1)
	if err := f.SetDropRate("s2", 2, 0.5); err != nil {
		t.Fatal(err)
	}
	lost := 0
	for i := 0; i < 200; i++ {
		if _, err := c.lidNodeInfo(hostB); errors.Is(err, ibmad.ErrTimeout) {
			lost++
		}
	}
	if lost < 60 || lost > 140 {
		t.Fatalf("lost %d of 200 at a 50%% drop rate on one link", lost)
	}
	s3, _ := f.LIDOf("s3", 0)
	if pc := readPortCounters(t, c, s3, 1); pc.PortRcvErrors == 0 || pc.SymbolErrorCounter == 0 {
		t.Fatalf("drops not counted at the far end: %+v", pc)
	}
	if err := f.SetDropRate("s2", 9, 0.5); err == nil {
		t.Fatal("port 9 of a 4-port switch accepted")
	}
}

func TestFaultLinkDownAndReroute(t *testing.T) {
	f := mustFabric(t, "two-switch.net", Options{})
	c := attach(t, f, "host1")
	host2, _ := f.LIDOf("host2", 1)
	out := f.LFT("sw1")[host2]
	if err := f.SetLinkState("sw1", int(out), false, false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.lidNodeInfo(host2); !errors.Is(err, ibmad.ErrTimeout) {
		t.Fatalf("link down without re-route: %v, want a timeout", err)
	}
	f.Reroute()
	if got := f.LFT("sw1")[host2]; got == out || got == ibmad.LFTNoRoute {
		t.Fatalf("re-route kept port %d", got)
	}
	if _, err := c.lidNodeInfo(host2); err != nil {
		t.Fatalf("after re-route over the parallel link: %v", err)
	}
	// Both parallel links down: no route at all.
	other := f.LFT("sw1")[host2]
	if err := f.SetLinkState("sw1", int(other), false, true); err != nil {
		t.Fatal(err)
	}
	if got := f.LFT("sw1")[host2]; got != ibmad.LFTNoRoute {
		t.Fatalf("no path left, LFT says %d", got)
	}
	if err := f.SetLinkState("sw1", int(out), true, true); err != nil {
		t.Fatal(err)
	}
	if _, err := c.lidNodeInfo(host2); err != nil {
		t.Fatalf("after the link came back: %v", err)
	}
}

func TestFaultDataPlaneDivergesFromLFT(t *testing.T) {
	f := mustFabric(t, "two-switch.net", Options{})
	c := attach(t, f, "host1")
	agent := attach(t, f, "host2")
	agent.serveIngress()
	swLID, _ := f.LIDOf("sw2", 0)
	host2, _ := f.LIDOf("host2", 1)
	programmed := f.LFT("sw1")[host2]
	other := uint8(3)
	if programmed == 3 {
		other = 5
	}
	if err := f.SetForwardOverride("sw1", host2, other); err != nil {
		t.Fatal(err)
	}
	// The LFT that SMPs read is unchanged...
	req := &ibmad.Request{Addr: ibmad.DRAddress()}
	s, _ := ibmad.NewDRGet(ibmad.AttrLinearForwardingTable, uint32(host2/64), ibmad.DRPath{1})
	_ = s.MarshalTo(req.MAD[:])
	resp, err := c.do(req)
	if err != nil || resp.MAD.SMPData()[host2%64] != programmed {
		t.Fatalf("LFT read %v %d, want %d", err, resp.MAD.SMPData()[host2%64], programmed)
	}
	// ...but the data plane delivers the MAD through the other link, so
	// host2 still answers while sw2 saw it arrive on the other port.
	if resp, err = c.vendorGet(host2); err != nil || resp.MAD.Status() != 0 {
		t.Fatalf("vendor MAD via the diverging switch: %v", err)
	}
	before := f.Node("sw2").Ports[other].ctr.rcvPkts.Load()
	if _, err := c.vendorGet(host2); err != nil {
		t.Fatal(err)
	}
	if f.Node("sw2").Ports[other].ctr.rcvPkts.Load() == before {
		t.Fatal("the MAD did not take the overriding port")
	}
	_ = swLID
	f.ClearForwardOverrides("sw1")
	if err := f.SetForwardOverride("host1", 1, 1); err == nil {
		t.Fatal("override on a CA accepted")
	}
}

func TestFaultLIDChangeAndSilentNode(t *testing.T) {
	f := mustFabric(t, "chain-5.net", Options{})
	c := attach(t, f, "hostA")
	hostC, _ := f.LIDOf("hostC", 1)
	hostB, _ := f.LIDOf("hostB", 1)
	// hostC takes hostB's LID: a duplicate LID. MADs to the old LID die,
	// MADs to the shared LID still follow the LFTs to hostB.
	if err := f.SetPortLID("hostC", 1, hostB); err != nil {
		t.Fatal(err)
	}
	if _, err := c.lidNodeInfo(hostC); !errors.Is(err, ibmad.ErrTimeout) {
		t.Fatalf("old LID still answers: %v", err)
	}
	if ni, err := c.lidNodeInfo(hostB); err != nil || ni.NodeGUID != f.Node("hostB").GUID {
		t.Fatalf("duplicate LID: %v %s", err, ni.NodeGUID)
	}
	s5, _ := f.LIDOf("s5", 0)
	if err := f.SetSilent("s5", true); err != nil {
		t.Fatal(err)
	}
	if _, err := c.lidNodeInfo(s5); !errors.Is(err, ibmad.ErrTimeout) {
		t.Fatalf("silent node answered: %v", err)
	}
	_ = f.SetSilent("s5", false)
	if _, err := c.lidNodeInfo(s5); err != nil {
		t.Fatalf("node back from silence: %v", err)
	}
	if err := f.SetPortLID("hostC", 1, 0xC001); err == nil {
		t.Fatal("multicast LID accepted")
	}
}

func TestHopLatency(t *testing.T) {
	f := mustFabric(t, "chain-5.net", Options{HopLatency: 2 * time.Millisecond})
	c := attach(t, f, "hostA")
	hostB, _ := f.LIDOf("hostB", 1)
	start := time.Now()
	if _, err := c.lidNodeInfo(hostB); err != nil {
		t.Fatal(err)
	}
	// 6 links each way at 2 ms.
	if d := time.Since(start); d < 24*time.Millisecond {
		t.Fatalf("round trip %v, want at least 24ms", d)
	}
}

func TestSeveralNodesInOneProcess(t *testing.T) {
	f := mustFabric(t, "fattree-mini.net", Options{})
	var clients []*client
	for _, n := range []string{"H0-0", "H0-1", "H1-2", "S1"} {
		clients = append(clients, attach(t, f, n))
	}
	for i, a := range clients {
		for j, b := range clients {
			p, _ := b.tr.Port()
			ni, err := a.lidNodeInfo(p.LID)
			if err != nil || ni.NodeGUID != p.NodeGUID {
				t.Fatalf("client %d -> %d: %v", i, j, err)
			}
		}
	}
	if _, err := f.Attach("nosuch", 0); err == nil {
		t.Fatal("attach to an unknown node")
	}
	if _, err := f.Attach("H0-0", 2); err == nil || fmt.Sprint(err) != `sim: node "H0-0" has no port 2 (1..1)` {
		t.Fatalf("bad port: %v", err)
	}
}
