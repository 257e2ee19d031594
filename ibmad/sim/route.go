package sim

import "github.com/ibtracer/ibtracer_exporter/ibmad"

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
	// Switch-to-switch adjacency over links that are up.
	type edge struct {
		port uint8
		to   int32
	}
	adj := make([][]edge, S)
	for i, sw := range f.switches {
		for _, p := range sw.Ports[1:] {
			if p.linkUp() && p.Remote.Node.IsSwitch() {
				adj[i] = append(adj[i], edge{p.Num, int32(p.Remote.Node.swIdx)})
			}
		}
	}
	// All-pairs hop distances by BFS (uint8: fabrics are far shallower
	// than 255 switch hops).
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
	// Destination LIDs grouped by the switch they hang off, with the port
	// that switch delivers them on (0 for the switch's own LID).
	type dest struct {
		lid  uint16
		port uint8
	}
	groups := make([][]dest, S)
	order := make([]int, 0, S) // switches in order of their first LID
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
	size := len(f.lids)
	load := make([][]uint32, S)
	for i, sw := range f.switches {
		load[i] = make([]uint32, len(sw.Ports))
		if len(sw.lft) != size {
			sw.lft = make([]uint8, size)
		}
		for j := range sw.lft {
			sw.lft[j] = ibmad.LFTNoRoute
		}
	}
	cands := make([]uint8, 0, 64)
	for _, t := range order {
		g := groups[t]
		for s := 0; s < S; s++ {
			lft := f.switches[s].lft
			if s == t {
				for _, d := range g {
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
			ld := load[s]
			for _, d := range g {
				best := cands[0]
				for _, c := range cands[1:] {
					if ld[c] < ld[best] {
						best = c
					}
				}
				lft[d.lid] = best
				ld[best]++
			}
		}
	}
}

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
