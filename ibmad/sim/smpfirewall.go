package sim

import "github.com/ibtracer/ibtracer_exporter/ibmad"

// SetSMPFirewall turns on (or off) the fault of a fabric where only the
// subnet manager may send SMPs, as M_Key protection or an HCA's SMP
// firewall make it: every SMP request (directed-route or LID-routed) sent
// from any node but the SM node is dropped without an answer, so the
// sender times out. SA, vendor and performance MADs pass.
func (f *Fabric) SetSMPFirewall(on bool) { f.smpFirewall.Store(on) }

// smpRefused says whether the firewall drops request m sent from t.
func (f *Fabric) smpRefused(t *Transport, m *ibmad.MAD, isResp bool) bool {
	if isResp || !f.smpFirewall.Load() || t.node == f.sm {
		return false
	}
	c := m.MgmtClass()
	return c == ibmad.ClassSubnDR || c == ibmad.ClassSubnLID
}
