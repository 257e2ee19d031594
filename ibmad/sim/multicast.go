package sim

import (
	"fmt"
	"sync"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// multicastTables is the switches' multicast forwarding tables: per
// switch, per MLID, the ports of its entry.
type multicastTables struct {
	mu  sync.RWMutex
	mft map[*Node]map[uint16][]uint8
}

// set replaces group mlid's entries with entries (by switch).
func (mc *multicastTables) set(mlid uint16, entries map[*Node][]uint8) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	if mc.mft == nil {
		mc.mft = map[*Node]map[uint16][]uint8{}
	}
	for _, byMLID := range mc.mft {
		delete(byMLID, mlid)
	}
	for sw, ports := range entries {
		if mc.mft[sw] == nil {
			mc.mft[sw] = map[uint16][]uint8{}
		}
		mc.mft[sw][mlid] = ports
	}
}

// mftCap is the MFT entries a simulated switch has (SwitchInfo's
// MulticastFDBCap).
const mftCap = 1024

// multicastTree computes the MFT entries of a group of members, the CAs
// named (their port 1), as an SM does after the members join: a spanning
// tree of the switches, breadth first from the first member's switch,
// cut down to the branches that lead to members; every switch on it gets
// the ports of its tree links and of its member CAs. The caller holds
// the fabric's mu for reading.
func multicastTree(byName map[string]*Node, members []string) (map[*Node][]uint8, error) {
	entries := map[*Node]map[uint8]bool{}
	add := func(n *Node, p uint8) {
		if entries[n] == nil {
			entries[n] = map[uint8]bool{}
		}
		entries[n][p] = true
	}
	var leaves []*Port // each member's switch port
	for _, name := range members {
		n := byName[name]
		if n == nil || n.IsSwitch() || n.NumPorts() < 1 || !n.Ports[1].linkUp() || !n.Ports[1].Remote.Node.IsSwitch() {
			return nil, fmt.Errorf("sim: multicast member %q: not a CA whose port 1 is linked to a switch", name)
		}
		leaves = append(leaves, n.Ports[1].Remote)
	}
	if len(leaves) == 0 {
		return nil, nil
	}
	// Breadth first from the first member's switch: up[sw] is the port of
	// sw toward its parent.
	root := leaves[0].Node
	up := map[*Node]*Port{root: nil}
	queue := []*Node{root}
	for len(queue) > 0 {
		sw := queue[0]
		queue = queue[1:]
		for _, p := range sw.Ports[1:] {
			if !p.linkUp() || !p.Remote.Node.IsSwitch() {
				continue
			}
			if _, seen := up[p.Remote.Node]; !seen {
				up[p.Remote.Node] = p.Remote
				queue = append(queue, p.Remote.Node)
			}
		}
	}
	for _, l := range leaves {
		if _, ok := up[l.Node]; !ok {
			return nil, fmt.Errorf("sim: multicast member behind switch %s is not reachable from %s", l.Node.Name, root.Name)
		}
		add(l.Node, l.Num)
		for sw := l.Node; up[sw] != nil; sw = up[sw].Remote.Node {
			add(sw, up[sw].Num)
			add(up[sw].Remote.Node, up[sw].Remote.Num)
		}
	}
	out := make(map[*Node][]uint8, len(entries))
	for sw, ports := range entries {
		for p := 1; p <= sw.NumPorts(); p++ {
			if ports[uint8(p)] {
				out[sw] = append(out[sw], uint8(p))
			}
		}
	}
	return out, nil
}

// block answers Get(MulticastForwardingTable) at switch node with
// modifier mod (docs/protocol.md, "MulticastForwardingTable"): the block
// in bits 0..8, the port-mask position in bits 28..31; the masks of the
// block's 32 MLIDs at that position go into data.
func (mc *multicastTables) block(node *Node, mod uint32, data []byte) ibmad.Status {
	block, pos := mod&0x1ff, uint8(mod>>28)
	if block >= mftCap/ibmad.MFTBlockSize || mod&0x0ffffe00 != 0 || pos > uint8(node.NumPorts()/ibmad.MFTPortsPerMask) {
		return ibmad.StatusInvalidField
	}
	var b ibmad.MFTBlock
	mc.mu.RLock()
	for i := range b {
		for _, p := range mc.mft[node][uint16(ibmad.MLIDBase+int(block)*ibmad.MFTBlockSize+i)] {
			if p/ibmad.MFTPortsPerMask == pos {
				b[i] |= 1 << (p % ibmad.MFTPortsPerMask)
			}
		}
	}
	mc.mu.RUnlock()
	_ = b.MarshalTo(data)
	return ibmad.StatusOK
}
