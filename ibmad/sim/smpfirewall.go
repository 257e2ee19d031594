package sim

import "github.com/ibtracer/ibtracer_exporter/ibmad"

// SMP protection faults: fabrics where only the subnet manager may send
// SMPs. SA, vendor and performance MADs pass; a refused SMP is dropped
// without an answer, so its sender times out.
const (
	smpOpen        = 0
	smpFirewall    = 1 // every SMP from a non-SM node (an HCA's SMP firewall)
	smpMKeyProtect = 2 // every SMP from a non-SM node but to itself (M_Key protection elsewhere)
)

// SetSMPFirewall turns on (or off) the fault of a fabric where an
// ordinary node's HCA refuses to send any SMP: every SMP request
// (directed-route or LID-routed) from any node but the SM node is dropped.
func (f *Fabric) SetSMPFirewall(on bool) { f.setSMPMode(on, smpFirewall) }

// SetSMPMKeyProtect turns on (or off) the fault of a fabric whose nodes
// are M_Key protected against everyone but the SM: a node's SMPs to
// itself (a directed route of no hops) are answered, every other SMP
// from a node but the SM node is dropped.
func (f *Fabric) SetSMPMKeyProtect(on bool) { f.setSMPMode(on, smpMKeyProtect) }

func (f *Fabric) setSMPMode(on bool, mode int32) {
	if on {
		f.smpMode.Store(mode)
	} else {
		f.smpMode.Store(smpOpen)
	}
}

// smpRefused says whether the SMP protection drops request m sent from t.
func (f *Fabric) smpRefused(t *Transport, m *ibmad.MAD, isResp bool) bool {
	mode := f.smpMode.Load()
	if isResp || mode == smpOpen || t.node == f.sm {
		return false
	}
	switch m.MgmtClass() {
	case ibmad.ClassSubnDR:
		return mode == smpFirewall || m.DRHopCount() > 0
	case ibmad.ClassSubnLID:
		return true
	}
	return false
}
