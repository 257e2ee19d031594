package sim

import (
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// What the subnet manager decides, done here as OpenSM does it: the LIDs
// (assignLIDs), the unicast routes (computeRoutes, Reroute), the multicast
// trees (SetMulticastGroup) and the QoS fields of PathRecords
// (SetPathQoS).

// assignLIDs gives every switch one LID (port 0) and every linked CA port
// an aligned block of 2^LMC LIDs, in topology order.
func (f *Fabric) assignLIDs() {
	next := uint16(1)
	block := uint16(1) << f.opts.LMC
	for _, n := range f.nodes {
		if n.IsSwitch() {
			n.Ports[0].LID, n.Ports[0].LMC = next, 0
			next++
			continue
		}
		for _, p := range n.Ports[1:] {
			if p.Remote == nil {
				continue
			}
			if r := next % block; r != 0 {
				next += block - r
			}
			p.LID, p.LMC = next, f.opts.LMC
			next += block
		}
	}
	f.rebuildLIDTable()
}

func (f *Fabric) rebuildLIDTable() {
	var maxLID uint16
	for _, n := range f.nodes {
		for _, p := range n.Ports {
			if p.LID != 0 {
				if _, hi := p.LIDRange(); hi > maxLID {
					maxLID = hi
				}
			}
		}
	}
	f.maxLID = maxLID
	f.lids = make([]*Port, int(maxLID)+1)
	for _, n := range f.nodes {
		for _, p := range n.Ports {
			if p.LID == 0 {
				continue
			}
			lo, hi := p.LIDRange()
			for l := int(lo); l <= int(hi); l++ {
				f.lids[l] = p
			}
		}
	}
}

const unreachable = 0xFF

// computeRoutes programs every switch's LFT with min-hop routes, the way
// OpenSM's minhop engine does: among the ports on a shortest path to the
// destination's switch, take the one that carries the fewest LIDs so far,
// so destinations spread over parallel links and spines. Only links that
// are up count. The caller holds f.mu for writing (or owns f).
func (f *Fabric) computeRoutes() {
	S := len(f.switches)
	if S == 0 {
		return
	}
	adj := f.switchAdjacency()
	dist := hopDistances(adj)
	groups, order := f.destGroups()
	load := f.clearLFTs()
	cands := make([]uint8, 0, 64)
	for _, t := range order {
		for s := 0; s < S; s++ {
			lft := f.switches[s].lft
			if s == t {
				for _, d := range groups[t] {
					lft[d.lid] = d.port
				}
				continue
			}
			ds := dist[s*S+t]
			if ds == unreachable {
				continue
			}
			cands = cands[:0]
			for _, e := range adj[s] {
				if dist[int(e.to)*S+t] == ds-1 {
					cands = append(cands, e.port)
				}
			}
			spread(lft, load[s], cands, groups[t])
		}
	}
}

// edge is a link from a switch, by its port, to another switch (by index
// in f.switches).
type edge struct {
	port uint8
	to   int32
}

// switchAdjacency is every switch's links to other switches that are up.
func (f *Fabric) switchAdjacency() [][]edge {
	adj := make([][]edge, len(f.switches))
	for i, sw := range f.switches {
		for _, p := range sw.Ports[1:] {
			if p.linkUp() && p.Remote.Node.IsSwitch() {
				adj[i] = append(adj[i], edge{p.Num, int32(p.Remote.Node.swIdx)})
			}
		}
	}
	return adj
}

// hopDistances is the all-pairs switch hop distances by BFS, row s the
// distances from switch s (uint8: fabrics are far shallower than 255
// switch hops; unreachable: no path).
func hopDistances(adj [][]edge) []uint8 {
	S := len(adj)
	dist := make([]uint8, S*S)
	for i := range dist {
		dist[i] = unreachable
	}
	queue := make([]int32, 0, S)
	for s := 0; s < S; s++ {
		row := dist[s*S : (s+1)*S]
		row[s] = 0
		queue = append(queue[:0], int32(s))
		for len(queue) > 0 {
			u := queue[0]
			queue = queue[1:]
			for _, e := range adj[u] {
				if row[e.to] == unreachable {
					row[e.to] = row[u] + 1
					queue = append(queue, e.to)
				}
			}
		}
	}
	return dist
}

// dest is a destination LID and the port its switch delivers it on (0 for
// the switch's own LID).
type dest struct {
	lid  uint16
	port uint8
}

// destGroups is the destination LIDs grouped by the switch they hang off
// (by index in f.switches), and those switches in order of their first
// LID.
func (f *Fabric) destGroups() (groups [][]dest, order []int) {
	groups = make([][]dest, len(f.switches))
	order = make([]int, 0, len(f.switches))
	for lid := 1; lid < len(f.lids); lid++ {
		p := f.lids[lid]
		if p == nil {
			continue
		}
		var t int
		var out uint8
		switch {
		case p.Node.IsSwitch():
			t, out = p.Node.swIdx, 0
		case p.linkUp() && p.Remote.Node.IsSwitch():
			t, out = p.Remote.Node.swIdx, p.Remote.Num
		default:
			continue
		}
		if groups[t] == nil {
			order = append(order, t)
		}
		groups[t] = append(groups[t], dest{uint16(lid), out})
	}
	return groups, order
}

// clearLFTs sizes every switch's LFT to the LID table with no route in
// it, and returns a zero count of LIDs routed per switch port.
func (f *Fabric) clearLFTs() [][]uint32 {
	size := len(f.lids)
	load := make([][]uint32, len(f.switches))
	for i, sw := range f.switches {
		load[i] = make([]uint32, len(sw.Ports))
		if len(sw.lft) != size {
			sw.lft = make([]uint8, size)
		}
		for j := range sw.lft {
			sw.lft[j] = ibmad.LFTNoRoute
		}
	}
	return load
}

// spread routes each destination of g through the candidate port (cands,
// on a shortest path; not empty) that carries the fewest LIDs so far
// (load), the first such on a tie.
func spread(lft []uint8, load []uint32, cands []uint8, g []dest) {
	for _, d := range g {
		best := cands[0]
		for _, c := range cands[1:] {
			if load[c] < load[best] {
				best = c
			}
		}
		lft[d.lid] = best
		load[best]++
	}
}

// SetMulticastGroup programs the MFTs of a group with MLID mlid whose
// members are the CAs named (their port 1), as an SM does after the
// members join: a spanning tree of the switches, breadth first from the
// first member's switch, cut down to the branches that lead to members;
// every switch on it gets the ports of its tree links and of its member
// CAs. No members clears the group. An unknown or non-CA member, or one
// the tree cannot reach, is an error and changes nothing.
func (f *Fabric) SetMulticastGroup(mlid uint16, members ...string) error {
	if mlid < ibmad.MLIDBase || mlid > ibmad.MLIDMax || uint32(mlid-ibmad.MLIDBase) >= mftCap {
		return fmt.Errorf("sim: MLID 0x%04x: want 0xC000..0x%04x", mlid, ibmad.MLIDBase+mftCap-1)
	}
	f.mu.RLock()
	entries, err := multicastTree(f.byName, members)
	f.mu.RUnlock()
	if err != nil {
		return err
	}
	f.mc.set(mlid, entries)
	return nil
}

// SetPathQoS makes the SA's PathRecords to the port whose GUID is port
// carry q (the tracer takes the SL and, when the hop limit is over 1, a
// GRH from them: docs/protocol.md, "SL and GRH").
func (f *Fabric) SetPathQoS(port ibmad.GUID, q PathQoS) { f.sa.setPathQoS(port, q) }

// Reroute recomputes every LFT from the current link state and LIDs, as an
// SM sweep would after a link change.
func (f *Fabric) Reroute() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rebuildLIDTable()
	f.computeRoutes()
}

// LFT returns a copy of switch name's programmed forwarding table, indexed
// by LID (0xFF: no route).
func (f *Fabric) LFT(name string) []uint8 {
	n := f.byName[name]
	if n == nil || !n.IsSwitch() {
		return nil
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	return append([]uint8(nil), n.lft...)
}

// forwardPort returns the port a switch's data plane sends lid out of:
// the LFT entry unless a divergence fault overrides it.
func (n *Node) forwardPort(lid uint16) uint8 {
	if p, ok := n.override[lid]; ok {
		return p
	}
	if int(lid) >= len(n.lft) {
		return ibmad.LFTNoRoute
	}
	return n.lft[lid]
}
