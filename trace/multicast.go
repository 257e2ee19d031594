package trace

import (
	"fmt"
	"strings"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// MulticastNote is the validation note of every multicast trace: the
// vendor agent and the SMA answer MADs, and a MAD is unicast (LID-routed
// by the LFTs, never by the MFTs), so no answer could tell whether the
// multicast tables carry the group's packets along the path
// (docs/architecture.md, "Multicast traces").
const MulticastNote = "agents cannot validate a multicast path: validation MADs are unicast and follow the LFTs, not the MFTs; no validation MAD was sent"

// mcNode is a node the multicast walk reached: its hop, the node it was
// reached from (-1 at the source), the port of that node it left by
// (via) and its own port it entered by (up).
type mcNode struct {
	hop     Hop
	parent  int
	via, up uint8
	mft     []uint8 // a switch's MFT ports for the MLID, once read
	// skipped says, for a port of mft the walk did not go on through,
	// why (multicast_explain.go).
	skipped map[uint8]skip
	// entered is, at the source, its LocalPortNum as our directed route
	// reads it: ibtracert -m prints it on the From line.
	entered uint8
}

// mcWalk is the state of one multicast walk.
type mcWalk struct {
	w        *walk
	mlid     uint16
	nodes    []mcNode
	seen     map[ibmad.GUID]bool
	deadEnds []string
	cuts     []string // the switches with a branch of their MFT entry cut (multicast_explain.go)
	firstEnd int      // the first node the walk could not go on from; -1: none
}

// newMulticastWalk is the multicast walk of MLID mlid to w.dlid.
func newMulticastWalk(w *walk, mlid uint16) *mcWalk {
	return &mcWalk{w: w, mlid: mlid, seen: map[ibmad.GUID]bool{}, firstEnd: -1}
}

// path walks from LID from (0: the local port) to the destination
// (TraceMulticast).
func (m *mcWalk) path(from uint16) ([]Hop, *Error) {
	w, mlid := m.w, m.mlid
	if mlid < ibmad.MLIDBase || mlid > ibmad.MLIDMax {
		return nil, fail(StatusResolve, ReasonBadConfig, nil, "MLID 0x%04x is not a multicast LID (0xC000..0xFFFE)", mlid)
	}
	if w.dlid == 0 || w.dlid >= ibmad.MLIDBase {
		return nil, fail(StatusResolve, ReasonBadConfig, nil, "destination LID %d is not a unicast LID (1..49151)", w.dlid)
	}
	if from >= ibmad.MLIDBase {
		return nil, fail(StatusResolve, ReasonBadConfig, nil, "source LID %d is not a unicast LID (1..49151)", from)
	}
	src, err := w.t.e.Port()
	if err != nil {
		return nil, fail(StatusDevice, ReasonDevice, err, "local port: %v", err)
	}
	w.src = src
	start, found, ferr := m.root(from)
	if ferr != nil {
		return m.chain(len(m.nodes) - 1), ferr
	}
	if found < 0 {
		found = m.search(start)
	}
	if found >= 0 {
		return m.chain(found), nil
	}
	if at, why := m.explain(); at >= 0 {
		return m.chain(at), why
	}
	end := m.firstEnd
	if end < 0 {
		end = 0
	}
	return m.chain(end), m.noRoute()
}

// noRoute is why the walk did not reach the destination: the switches it
// could not go on from.
func (m *mcWalk) noRoute() *Error {
	why := "the multicast forwarding tables lead nowhere from the source"
	if n := len(m.deadEnds); n > 0 {
		shown := m.deadEnds[:min(n, 4)]
		why = strings.Join(shown, "; ")
		if n > len(shown) {
			why += fmt.Sprintf("; and %d more", n-len(shown))
		}
	}
	return fail(StatusUnreachable, ReasonNoRoute, nil, "no multicast route for MLID 0x%04x from LID %d to LID %d: %s",
		m.mlid, m.nodes[0].hop.LID, m.w.dlid, why)
}

// chain returns the path from the source to node i: each hop enters by
// the port it was reached through and leaves by its successor's via.
func (m *mcWalk) chain(i int) []Hop {
	var idx []int
	for ; i >= 0; i = m.nodes[i].parent {
		idx = append(idx, i)
	}
	hops := make([]Hop, len(idx))
	for k := range idx {
		n := &m.nodes[idx[len(idx)-1-k]]
		hops[k] = n.hop
		hops[k].Hop, hops[k].InPort, hops[k].OutPort = k, n.up, 0
		if k > 0 {
			hops[k-1].OutPort = n.via
		} else {
			hops[k].InPort = n.entered
		}
	}
	return hops
}

// root puts the source into m.nodes (and, for a CA, the node behind its
// port: a CA forwards nothing, so the walk starts there) and returns the
// nodes the search starts from, or the node that already owns the
// destination (found >= 0).
func (m *mcWalk) root(from uint16) (start []int, found int, ferr *Error) {
	w := m.w
	var s Hop
	var pre []Hop
	var entered uint8
	local := from == 0 || ownsLocal(w.src, from)
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
		toSrc := newWalk(w.t, w.ctx, w.src, from)
		toSrc.viaSA = false
		toSrc.fresh.Store(true)
		var ferr *Error
		pre, ferr = toSrc.walkPath()
		w.absorb(toSrc)
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
