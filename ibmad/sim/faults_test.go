package sim

import (
	"errors"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

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

// TestLinkTrainingPortInfo checks what the simulated SMA reports for a
// degraded link, both ends, and that it is repaired.
func TestLinkTrainingPortInfo(t *testing.T) {
	topo, _ := FatTree2(2, 2, 2, 1)
	f, err := New(topo, Options{})
	if err != nil {
		t.Fatal(err)
	}
	leaf := f.Node("L0")
	var up *Port
	for _, p := range leaf.Ports[1:] {
		if p.Remote != nil && p.Remote.Node.IsSwitch() {
			up = p
			break
		}
	}
	if err := f.SetLinkWidth("L0", int(up.Num), true); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*Port{up, up.Remote} {
		pi := p.Node.portInfo(p, p)
		if pi.LinkWidthActive != 1 || pi.LinkWidthSupported != 3 || pi.PortState != ibmad.PortStateActive {
			t.Fatalf("%s[%d]: %+v", p.Node.Name, p.Num, pi)
		}
	}
	if err := f.SetLinkSpeed("L0", int(up.Num), true); err != nil {
		t.Fatal(err)
	}
	if pi := leaf.portInfo(up, up); pi.LinkSpeedActive != 1 || pi.LinkWidthActive != 2 {
		t.Fatalf("SDR: %+v", pi)
	}
	_ = f.SetLinkSpeed("L0", int(up.Num), false)
	if pi := leaf.portInfo(up, up); pi.LinkSpeedActive != 4 || pi.LinkWidthActive != 2 {
		t.Fatalf("repaired: %+v", pi)
	}
	if err := f.SetLinkWidth("L0", 99, true); err == nil {
		t.Fatal("no error for a port that does not exist")
	}
	if err := f.SetErrorRate("L0", int(up.Num), -1, nil); err == nil {
		t.Fatal("no error for a negative rate")
	}
}

// TestSMPFirewallDropsSMPsButTheSMs: with the firewall on, an SMP from an
// ordinary host gets no answer (directed-route and LID-routed alike),
// while the SM node's SMPs and the host's SA queries are answered; off
// again, the host's SMPs are answered.
func TestSMPFirewallDropsSMPsButTheSMs(t *testing.T) {
	f := mustFabric(t, "two-switch.net", Options{})
	host := attach(t, f, "host3")
	sm := attach(t, f, f.SMNode().Name)
	lid, _ := f.LIDOf("host4", 1)
	if _, err := host.lidNodeInfo(lid); err != nil {
		t.Fatalf("before the fault: %v", err)
	}
	f.SetSMPFirewall(true)
	if _, err := host.lidNodeInfo(lid); !errors.Is(err, ibmad.ErrTimeout) {
		t.Fatalf("LID-routed SMP from a host through the firewall: %v, want a timeout", err)
	}
	dr := &ibmad.Request{Addr: ibmad.DRAddress()}
	var s ibmad.SMP
	_ = s.InitDRGet(ibmad.AttrNodeInfo, 0, ibmad.DRPath{})
	_ = s.MarshalTo(dr.MAD[:])
	if _, err := host.do(dr); !errors.Is(err, ibmad.ErrTimeout) {
		t.Fatalf("directed-route SMP from a host through the firewall: %v, want a timeout", err)
	}
	if _, err := sm.lidNodeInfo(lid); err != nil {
		t.Fatalf("the SM's SMP: %v", err)
	}
	resp, err := saGet(host, f, ibmad.AttrNodeRecord, ibmad.NRCompLID, func(b []byte) {
		nr := ibmad.NodeRecord{LID: lid}
		_ = nr.MarshalTo(b)
	})
	if err != nil || resp.MAD.Status() != 0 {
		t.Fatalf("SA query through the firewall: %v %s", err, resp.MAD.Status())
	}
	f.SetSMPFirewall(false)
	if _, err := host.lidNodeInfo(lid); err != nil {
		t.Fatalf("after the fault: %v", err)
	}
}

// TestSMPMKeyProtectAnswersOnlyTheLocalNode: with M_Key protection on
// every other node, a host's SMPs to itself are answered, its SMPs to
// any other node are not, and the neighbour's PMA still answers.
func TestSMPMKeyProtectAnswersOnlyTheLocalNode(t *testing.T) {
	f := mustFabric(t, "two-switch.net", Options{})
	host := attach(t, f, "host3")
	f.SetSMPMKeyProtect(true)
	send := func(path ibmad.DRPath) error {
		dr := &ibmad.Request{Addr: ibmad.DRAddress()}
		var s ibmad.SMP
		_ = s.InitDRGet(ibmad.AttrNodeInfo, 0, path)
		_ = s.MarshalTo(dr.MAD[:])
		_, err := host.do(dr)
		return err
	}
	if err := send(ibmad.DRPath{}); err != nil {
		t.Fatalf("the host's SMP to itself: %v", err)
	}
	if err := send(ibmad.DRPath{1}); !errors.Is(err, ibmad.ErrTimeout) {
		t.Fatalf("the host's SMP to its neighbour: %v, want a timeout", err)
	}
	sw := f.Node("host3").Ports[1].Remote.Node
	req := &ibmad.Request{Addr: ibmad.GSIAddress(sw.Ports[0].LID, 0)}
	_ = ibmad.NewPerfMgtGet(ibmad.AttrClassPortInfo).MarshalTo(req.MAD[:])
	if _, err := host.do(req); err != nil {
		t.Fatalf("the neighbour's PMA: %v", err)
	}
	f.SetSMPMKeyProtect(false)
	if err := send(ibmad.DRPath{1}); err != nil {
		t.Fatalf("after the fault: %v", err)
	}
}
