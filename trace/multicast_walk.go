package trace

import (
	"fmt"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// root puts the source into m.nodes (and, for a CA, the node behind its
// port: a CA forwards nothing, so the walk starts there) and returns the
// nodes the search starts from, or the node that already owns the
// destination (found >= 0).
func (m *mcWalk) root(from uint16) (start []int, found int, ferr *Error) {
	w := m.w
	var s Hop
	var pre []Hop
	var entered uint8
	local := from == 0 || w.ownsLocal(from)
	if local {
		ni, rtt, err := w.nodeInfo(ibmad.DRPath{})
		if err != nil {
			return nil, -1, w.smpFail(err, "NodeInfo of the local node")
		}
		desc, err := w.description(ni.NodeGUID, ibmad.DRPath{})
		if err != nil {
			return nil, -1, w.smpFail(err, "NodeDescription of the local node")
		}
		s = Hop{NodeGUID: ni.NodeGUID, PortGUID: ni.PortGUID, NodeType: ni.NodeType, NodeDesc: desc, LID: w.src.LID, LMC: w.src.LMC,
			DRPath: ibmad.DRPath{}, RTT: rtt, numPorts: ni.NumPorts}
		entered = ni.LocalPortNum
	} else {
		toSrc := w.t.newWalk(w.ctx, w.src, from)
		toSrc.viaSA = false
		toSrc.fresh.Store(true)
		var ferr *Error
		pre, ferr = toSrc.walkPath()
		w.mads.Add(toSrc.mads.Load())
		if ferr != nil {
			ferr.Msg = fmt.Sprintf("the source, LID %d: %s", from, ferr.Msg)
			return nil, -1, ferr
		}
		s = pre[len(pre)-1]
		entered = s.InPort
		s.InPort, s.OutPort, s.Hop = 0, 0, 0
	}
	s.Agent = AgentSource
	if s.NodeType == ibmad.NodeTypeSwitch {
		s.LMC = 0
	}
	m.nodes = append(m.nodes, mcNode{hop: s, parent: -1, entered: entered})
	m.seen[s.NodeGUID] = true
	if owns(&s, w.dlid) {
		return nil, -1, fail(StatusResolve, ReasonBadConfig, nil, "the source owns the destination LID %d: a multicast trace needs two ports", w.dlid)
	}
	if s.NodeType == ibmad.NodeTypeSwitch {
		return []int{0}, -1, nil
	}
	j, ferr := m.leaveCA(local, pre)
	if ferr != nil {
		return nil, -1, ferr
	}
	if owns(&m.nodes[j].hop, w.dlid) {
		return nil, j, nil
	}
	m.seen[m.nodes[j].hop.NodeGUID] = true
	return []int{j}, -1, nil
}

// leaveCA adds the node behind the source CA's port: for the local port
// read along its link, for another port the node one hop back along the
// directed route that reached it.
func (m *mcWalk) leaveCA(local bool, pre []Hop) (int, *Error) {
	w := m.w
	if local {
		if ferr := w.localDown(); ferr != nil {
			return -1, ferr
		}
		port := w.src.PortNum
		j, err := m.visit(0, port)
		if err != nil {
			return -1, w.smpFail(err, "the node behind the local port %d", port)
		}
		return j, nil
	}
	if len(pre) < 2 {
		return -1, fail(StatusUnreachable, ReasonNoRoute, nil, "the source is on the local node but not its port")
	}
	s, p := pre[len(pre)-1], pre[len(pre)-2]
	nb := p
	nb.Agent, nb.InPort, nb.OutPort = "", 0, 0
	if nb.NodeType == ibmad.NodeTypeSwitch {
		nb.LMC = 0
	}
	m.nodes = append(m.nodes, mcNode{hop: nb, parent: 0, via: s.InPort, up: s.DRPath[len(s.DRPath)-1]})
	return len(m.nodes) - 1, nil
}

func (w *walk) ownsLocal(lid uint16) bool {
	local := Hop{LID: w.src.LID, LMC: w.src.LMC}
	if w.src.NodeType == ibmad.NodeTypeSwitch {
		local.LMC = 0
	}
	return owns(&local, lid)
}

// visit reads the node behind port of node parent and adds it.
func (m *mcWalk) visit(parent int, port uint8) (int, error) {
	w := m.w
	path := m.nodes[parent].hop.DRPath.Extend(port)
	ni, rtt, err := w.nodeInfo(path)
	if err != nil {
		return -1, err
	}
	pi, err := w.portInfo(path, 0)
	if err != nil {
		return -1, err
	}
	desc, err := w.description(ni.NodeGUID, path)
	if err != nil {
		return -1, err
	}
	h := Hop{NodeGUID: ni.NodeGUID, PortGUID: ni.PortGUID, NodeType: ni.NodeType, NodeDesc: desc, LID: pi.LID, LMC: pi.LMC,
		DRPath: path, RTT: rtt, numPorts: ni.NumPorts}
	if ni.NodeType == ibmad.NodeTypeSwitch {
		h.LMC = 0
	}
	m.nodes = append(m.nodes, mcNode{hop: h, parent: parent, via: port, up: ni.LocalPortNum})
	return len(m.nodes) - 1, nil
}

// search walks breadth first from start, as ibtracert -m does (the nodes
// of one distance newest first), and returns the node that owns the
// destination, or -1.
func (m *mcWalk) search(start []int) int {
	level := start
	for len(level) > 0 {
		var next []int
		for k := len(level) - 1; k >= 0; k-- {
			i := level[k]
			if m.nodes[i].hop.NodeType != ibmad.NodeTypeSwitch {
				continue // a CA forwards nothing
			}
			found, more := m.expand(i)
			if found >= 0 {
				return found
			}
			next = append(next, more...)
		}
		level = next
	}
	return -1
}

// expand follows the ports switch i's MFT entry selects, but the one the
// walk entered by, over links that are up; it returns the destination
// when one of them leads to it, and the new switches and CAs.
func (m *mcWalk) expand(i int) (int, []int) {
	w := m.w
	ports, why := m.mftPorts(i)
	if why != "" {
		m.deadEnd(i, why)
		return -1, nil
	}
	m.nodes[i].mft = ports
	var more []int
	onward := 0
	for _, p := range ports {
		h := &m.nodes[i].hop
		if p == 0 || p > h.numPorts {
			continue
		}
		if p == m.nodes[i].up {
			m.skip(i, p, skipEntered, nil)
			continue
		}
		if len(h.DRPath) >= ibmad.MaxDRHops {
			m.deadEnd(i, fmt.Sprintf("is %d hops away: a directed route reaches no further", len(h.DRPath)))
			return -1, more
		}
		pi, err := w.portInfo(h.DRPath, p)
		if err != nil {
			m.skip(i, p, skipPortInfo, err)
			continue
		}
		if pi.PortPhysState != ibmad.PhysStateLinkUp {
			m.skip(i, p, skipDown, fmt.Errorf("%s", pi.PortPhysState))
			continue
		}
		onward++
		j, err := m.visit(i, p)
		if err != nil {
			m.skip(i, p, skipNoAnswer, err) // as ibtracert: a port whose far end does not answer is skipped
			continue
		}
		if owns(&m.nodes[j].hop, w.dlid) {
			return j, nil
		}
		if g := m.nodes[j].hop.NodeGUID; m.seen[g] {
			m.nodes = m.nodes[:j] // met again: a loop, or a second way there
			m.skip(i, p, skipMet, nil)
			continue
		} else {
			m.seen[g] = true
		}
		more = append(more, j)
	}
	m.brokenEnd(i, onward)
	return -1, more
}

func (m *mcWalk) deadEnd(i int, why string) {
	h := &m.nodes[i].hop
	m.deadEnds = append(m.deadEnds, fmt.Sprintf("%s (LID %d) %s", name(h), h.LID, why))
	if m.firstEnd < 0 {
		m.firstEnd = i
	}
}

// mftPorts returns the ports switch i's MFT entry for the MLID selects,
// or why there are none.
func (m *mcWalk) mftPorts(i int) ([]uint8, string) {
	w, h := m.w, &m.nodes[i].hop
	resp, err := w.smp(h.DRPath, ibmad.AttrSwitchInfo, 0)
	if err != nil {
		return nil, fmt.Sprintf("did not answer SwitchInfo: %v", err)
	}
	var si ibmad.SwitchInfo
	_ = si.UnmarshalBinary(resp.MAD.SMPData())
	if uint32(m.mlid-ibmad.MLIDBase) >= uint32(si.MulticastFDBCap) {
		return nil, fmt.Sprintf("has MFT entries for %d MLIDs (MulticastFDBCap): none for 0x%04x", si.MulticastFDBCap, m.mlid)
	}
	var ports []uint8
	for pos := uint8(0); pos < ibmad.MFTPositions(h.numPorts); pos++ {
		mod, _ := ibmad.MFTModifier(m.mlid, pos)
		resp, err := w.smp(h.DRPath, ibmad.AttrMulticastForwardingTable, mod)
		if err != nil {
			return nil, fmt.Sprintf("did not answer MulticastForwardingTable block %d position %d: %v", ibmad.MFTBlockOf(m.mlid), pos, err)
		}
		var b ibmad.MFTBlock
		_ = b.UnmarshalBinary(resp.MAD.SMPData())
		ports = append(ports, ibmad.MFTPorts(b.Mask(m.mlid), pos)...)
	}
	if len(ports) == 0 {
		return nil, fmt.Sprintf("has no port in its MFT entry for MLID 0x%04x", m.mlid)
	}
	return ports, ""
}
