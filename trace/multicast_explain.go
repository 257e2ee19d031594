package trace

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// explain finds where the multicast tree misses the destination: the
// unicast route from the local port to it is walked, and the last switch
// on that route the multicast walk reached is the hop where the walk
// lost the route (docs/architecture.md, "Multicast traces"). Either its
// MFT entry has no port toward the destination, or it has, and the walk
// could not go on through that port (its link down, the node behind it
// silent): the error says which. It returns that node and the failure,
// or -1 when the unicast route cannot be walked or meets no switch of
// the tree.
func (m *mcWalk) explain() (int, *Error) {
	w := m.w
	uni := newWalk(w.t, w.ctx, w.src, w.dlid)
	uni.viaSA = false
	uni.fresh.Store(true)
	route, ferr := uni.walkPath()
	w.absorb(uni)
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
		return i, m.lost(i, route[k].OutPort)
	}
	return -1, nil
}

// lost is the failure at switch i, on the group's tree, whose unicast
// route to the destination leaves by port out.
func (m *mcWalk) lost(i int, out uint8) *Error {
	n, dlid := &m.nodes[i], m.w.dlid
	h := &n.hop
	head := fmt.Sprintf("no multicast route for MLID 0x%04x from LID %d to LID %d: %s (LID %d) is on the group's tree",
		m.mlid, m.nodes[0].hop.LID, dlid, name(h), h.LID)
	if !slices.Contains(n.mft, out) {
		msg := fmt.Sprintf("%s, but its MFT entry selects ports %v, not port %d, which leads to LID %d", head, n.mft, out, dlid)
		if n := len(m.cuts); n > 0 {
			msg += "; and the search found the group's tree cut: " + strings.Join(m.cuts[:min(n, 4)], "; ")
			if n > 4 {
				msg += fmt.Sprintf("; and %d more", n-4)
			}
		}
		return fail(StatusUnreachable, ReasonNoRoute, nil, "%s", msg)
	}
	why := fmt.Sprintf("the walk did not reach LID %d through it", dlid)
	if s, ok := n.skipped[out]; ok {
		why = s.say(out)
	}
	return fail(StatusUnreachable, ReasonNoRoute, nil, "%s and its MFT entry (ports %v) selects port %d, which leads to LID %d, but %s",
		head, n.mft, out, dlid, why)
}

// skip is why the multicast walk did not go on through a port of a
// switch's MFT entry.
type skip struct {
	kind   skipKind
	detail string // the port's physical state, or the error
}

type skipKind uint8

const (
	skipEntered  skipKind = iota // the port the walk entered the switch by
	skipPortInfo                 // the switch did not answer the port's PortInfo
	skipDown                     // the port's link is not LinkUp
	skipNoAnswer                 // the node behind the port did not answer
	skipMet                      // the node behind it was reached another way
)

// say is what a skip of port p means, in the words of an error.
func (s skip) say(p uint8) string {
	switch s.kind {
	case skipEntered:
		return fmt.Sprintf("port %d is the one the walk entered it by", p)
	case skipPortInfo:
		return fmt.Sprintf("it did not answer the PortInfo of port %d (%s)", p, s.detail)
	case skipDown:
		return fmt.Sprintf("port %d's link was down (%s) when the walk read it", p, s.detail)
	case skipNoAnswer:
		return fmt.Sprintf("the node behind port %d did not answer (%s)", p, s.detail)
	}
	return fmt.Sprintf("port %d leads to a node the walk had reached another way", p)
}

// cut says whether a skip leaves a branch of the tree unseen: a link
// down or a node that does not answer.
func (s skip) cut() bool {
	return s.kind == skipPortInfo || s.kind == skipDown || s.kind == skipNoAnswer
}

// skip records why the walk did not go on through port p of switch i.
func (m *mcWalk) skip(i int, p uint8, kind skipKind, err error) {
	n := &m.nodes[i]
	if n.skipped == nil {
		n.skipped = map[uint8]skip{}
	}
	s := skip{kind: kind}
	if err != nil {
		s.detail = err.Error()
	}
	n.skipped[p] = s
}

// broken lists the ports of switch i's MFT entry whose branch the walk
// could not follow: a link down, a node that did not answer.
func (m *mcWalk) broken(i int) []string {
	var b []string
	for _, p := range m.nodes[i].mft {
		if s, ok := m.nodes[i].skipped[p]; ok && s.cut() {
			b = append(b, s.say(p))
		}
	}
	return b
}

// brokenEnd records switch i as a place the walk could not go on from,
// once its MFT ports are followed: no port led on (onward 0), or some
// branch is cut (broken). The error names them when explain cannot;
// the cut ones also when explain blames an entry that lacks a port,
// since a cut branch, on the unicast route or off it, is the likelier
// cause (an SM that rerouted the LIDs around a dead link but left the
// group's tree over it).
func (m *mcWalk) brokenEnd(i int, onward int) {
	b, ports := m.broken(i), m.nodes[i].mft
	switch {
	case onward == 0 && len(b) == 0:
		m.deadEnd(i, fmt.Sprintf("forwards MLID 0x%04x to no linked port but the one it came in by (MFT ports %v)", m.mlid, ports))
	case len(b) > 0:
		m.deadEnd(i, fmt.Sprintf("forwards MLID 0x%04x to ports %v, but %s", m.mlid, ports, strings.Join(b, ", ")))
		m.cuts = append(m.cuts, m.deadEnds[len(m.deadEnds)-1])
	}
}
