package sim

import "github.com/ibtracer/ibtracer_exporter/ibmad"

// AcceptAll makes t take every request that reaches its node and that the
// fabric does not answer itself (the SMA, the SA at the SM node and the
// PMA answer theirs), whatever its class: the way ibsim hands such
// requests to a client that connected with its "issm" flag. A socket
// server (package simserve) uses it for such a client, whose own
// registrations live on the other side of the socket.
func (t *Transport) AcceptAll(on bool) { t.all.Store(on) }

// NodeInfo returns the NodeInfo the attached node's SMA answers through
// the attached port.
func (t *Transport) NodeInfo() ibmad.NodeInfo {
	t.f.mu.RLock()
	defer t.f.mu.RUnlock()
	return nodeInfo(t.node, t.port)
}

// PortInfo returns PortInfo of port num of the attached node as its SMA
// answers it through the attached port; num 0 on a CA is the attached
// port. ok is false when the node has no such port.
func (t *Transport) PortInfo(num int) (pi ibmad.PortInfo, ok bool) {
	n := t.node
	if num == 0 && !n.IsSwitch() {
		num = int(t.port.Num)
	}
	if num < 0 || num > n.NumPorts() {
		return pi, false
	}
	t.f.mu.RLock()
	defer t.f.mu.RUnlock()
	return t.f.portInfo(n, n.Ports[num], t.port), true
}

// PortNum returns the number of the attached port (0 on a switch).
func (t *Transport) PortNum() uint8 { return t.port.Num }

// LID returns the attached port's base LID (a switch's port 0 LID).
func (t *Transport) LID() uint16 {
	t.f.mu.RLock()
	defer t.f.mu.RUnlock()
	return t.port.LID
}
