package sim

import (
	"errors"
	"testing"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

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
