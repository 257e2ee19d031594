package sim

import (
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// How a switch's SMA fills LocalPortNum (NodeInfo, PortInfo) in its answer
// to a LID-routed SMP (docs/protocol.md, "Validation by the SMA"). Real
// switches name the external port the SMP arrived on; ibsim answers 0.
// Directed-route SMPs always get the arrival port.
const (
	localPortFabric = 0 // as Options.SwitchLocalPortZero says
	localPortZero   = 1 // 0, as ibsim
	localPortReal   = 2 // the arrival port, as real switches
)

// SetSwitchLocalPortZero makes switch name's SMA answer LocalPortNum 0 to
// LID-routed SMPs, as ibsim's do (zero), or the port they arrived on, as
// real switches do (!zero), whatever Options.SwitchLocalPortZero says for
// the rest of the fabric.
func (f *Fabric) SetSwitchLocalPortZero(name string, zero bool) error {
	n := f.byName[name]
	if n == nil || !n.IsSwitch() {
		return fmt.Errorf("sim: %q is not a switch", name)
	}
	if zero {
		n.localPort.Store(localPortZero)
	} else {
		n.localPort.Store(localPortReal)
	}
	return nil
}

// smaLID answers a LID-routed SMP at node, which it entered through port
// in: as sma, but a switch that models ibsim answers as if from port 0.
func (f *Fabric) smaLID(node *Node, in *Port, m *ibmad.MAD) {
	if node.IsSwitch() {
		mode := node.localPort.Load()
		if mode == localPortZero || (mode == localPortFabric && f.opts.SwitchLocalPortZero) {
			in = node.Ports[0]
		}
	}
	f.sma(node, in, m)
}
