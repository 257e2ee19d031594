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
