package trace

import "github.com/ibtracer/ibtracer_exporter/ibmad"

// explain finds where the multicast tree misses the destination: the
// unicast route from the local port to it is walked, and the last switch
// on that route the multicast walk reached is the hop whose MFT entry has
// no port toward the destination (docs/architecture.md, "Multicast
// traces"). It returns that node and the failure, or -1 when the unicast
// route cannot be walked or meets no switch of the tree.
func (m *mcWalk) explain() (int, *Error) {
	w := m.w
	uni := w.t.newWalk(w.ctx, w.src, w.dlid)
	uni.viaSA = false
	uni.fresh.Store(true)
	route, ferr := uni.walkPath()
	w.mads.Add(uni.mads.Load())
	if ferr != nil {
		return -1, nil
	}
	at := map[ibmad.GUID]int{}
	for i := range m.nodes {
		if m.nodes[i].hop.NodeType == ibmad.NodeTypeSwitch && m.nodes[i].mft != nil {
			if _, ok := at[m.nodes[i].hop.NodeGUID]; !ok {
				at[m.nodes[i].hop.NodeGUID] = i
			}
		}
	}
	for k := len(route) - 1; k >= 0; k-- {
		i, ok := at[route[k].NodeGUID]
		if !ok || route[k].OutPort == 0 {
			continue
		}
		h := &m.nodes[i].hop
		return i, fail(StatusUnreachable, ReasonNoRoute, nil,
			"no multicast route for MLID 0x%04x from LID %d to LID %d: %s (LID %d) is on the group's tree, but its MFT entry selects ports %v, not port %d, which leads to LID %d",
			m.mlid, m.nodes[0].hop.LID, w.dlid, name(h), h.LID, m.nodes[i].mft, route[k].OutPort, w.dlid)
	}
	return -1, nil
}
